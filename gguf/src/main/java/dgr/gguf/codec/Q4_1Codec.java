package dgr.gguf.codec;

import dgr.gguf.GgmlType;
import java.lang.foreign.MemorySegment;

/**
 * Q4_1: f16 d; f16 m; u8 qs[16]; x = d·q + m with Q4_0's nibble order.
 * quantize_row_q4_1_ref: m = min, d = (max − min)/15, q = min(15, (int8)((x − min)/d + 0.5)).
 */
final class Q4_1Codec extends BlockLoop {
    Q4_1Codec() { super(GgmlType.Q4_1); }

    @Override
    void decodeBlock(MemorySegment src, long off, float[] dst, int d) {
        float scale = Le.f16(src, off);
        float m = Le.f16(src, off + 2);
        for (int j = 0; j < 16; j++) {
            int q = Le.u8(src, off + 4 + j);
            dst[d + j] = (q & 0x0f) * scale + m;
            dst[d + j + 16] = (q >>> 4) * scale + m;
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
        float d = (max - min) / 15;
        float id = d != 0 ? 1.0f / d : 0.0f;
        Le.putF16(dst, off, d);
        Le.putF16(dst, off + 2, min);
        for (int j = 0; j < 16; j++) {
            int q0 = Math.min(15, CRound.truncToInt8((src[s + j] - min) * id + 0.5f));
            int q1 = Math.min(15, CRound.truncToInt8((src[s + 16 + j] - min) * id + 0.5f));
            Le.put8(dst, off + 4 + j, (q0 & 0xff) | (q1 << 4));
        }
    }
}
