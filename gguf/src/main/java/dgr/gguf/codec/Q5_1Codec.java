package dgr.gguf.codec;

import dgr.gguf.GgmlType;
import java.lang.foreign.MemorySegment;

/**
 * Q5_1: f16 d; f16 m; u32 qh; u8 qs[16]; x = d·q + m with Q5_0's bit order.
 * quantize_row_q5_1_ref: m = min, d = (max − min)/31, q = (uint8)((x − min)/d + 0.5) (no clamp).
 */
final class Q5_1Codec extends BlockLoop {
    Q5_1Codec() { super(GgmlType.Q5_1); }

    @Override
    void decodeBlock(MemorySegment src, long off, float[] dst, int d) {
        float scale = Le.f16(src, off);
        float m = Le.f16(src, off + 2);
        int qh = Le.i32(src, off + 4);
        for (int j = 0; j < 16; j++) {
            int q = Le.u8(src, off + 8 + j);
            int h0 = ((qh >>> j) << 4) & 0x10;
            int h1 = (qh >>> (j + 12)) & 0x10;
            dst[d + j] = ((q & 0x0f) | h0) * scale + m;
            dst[d + j + 16] = ((q >>> 4) | h1) * scale + m;
        }
    }

    @Override
    void encodeBlock(float[] src, int s, MemorySegment dst, long off) {
        float min = Float.MAX_VALUE, max = -Float.MAX_VALUE;
        for (int j = 0; j < 32; j++) {
            float v = src[s + j];
            if (v < min) min = v;
            if (v > max) max = v;
        }
        float d = (max - min) / 31;
        float id = d != 0 ? 1.0f / d : 0.0f;
        Le.putF16(dst, off, d);
        Le.putF16(dst, off + 2, min);
        int qh = 0;
        for (int j = 0; j < 16; j++) {
            int q0 = CRound.truncToUint8((src[s + j] - min) * id + 0.5f);
            int q1 = CRound.truncToUint8((src[s + 16 + j] - min) * id + 0.5f);
            Le.put8(dst, off + 8 + j, (q0 & 0x0f) | ((q1 & 0x0f) << 4));
            qh |= ((q0 & 0x10) >>> 4) << j;
            qh |= ((q1 & 0x10) >>> 4) << (j + 16);
        }
        Le.put32(dst, off + 4, qh);
    }
}
