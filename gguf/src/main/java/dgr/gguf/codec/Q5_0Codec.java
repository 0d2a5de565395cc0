package dgr.gguf.codec;

import dgr.gguf.GgmlType;
import java.lang.foreign.MemorySegment;

/**
 * Q5_0: f16 d; u32 qh; u8 qs[16]; the 5th bit of x[j] is qh bit j, of x[j+16] qh bit j+16;
 * x = d·(q − 16). quantize_row_q5_0_ref: d = (signed max-magnitude value) / −16.
 */
final class Q5_0Codec extends BlockLoop {
    Q5_0Codec() { super(GgmlType.Q5_0); }

    @Override
    void decodeBlock(MemorySegment src, long off, float[] dst, int d) {
        float scale = Le.f16(src, off);
        int qh = Le.i32(src, off + 2);
        for (int j = 0; j < 16; j++) {
            int q = Le.u8(src, off + 6 + j);
            int h0 = ((qh >>> j) << 4) & 0x10;
            int h1 = (qh >>> (j + 12)) & 0x10;
            dst[d + j] = (((q & 0x0f) | h0) - 16) * scale;
            dst[d + j + 16] = (((q >>> 4) | h1) - 16) * scale;
        }
    }

    @Override
    void encodeBlock(float[] src, int s, MemorySegment dst, long off) {
        float amax = 0f, max = 0f;
        for (int j = 0; j < 32; j++) {
            float v = src[s + j];
            if (amax < Math.abs(v)) {
                amax = Math.abs(v);
                max = v;
            }
        }
        float d = max / -16;
        float id = d != 0 ? 1.0f / d : 0.0f;
        Le.putF16(dst, off, d);
        int qh = 0;
        for (int j = 0; j < 16; j++) {
            int q0 = Math.min(31, CRound.truncToInt8(src[s + j] * id + 16.5f)) & 0xff;
            int q1 = Math.min(31, CRound.truncToInt8(src[s + 16 + j] * id + 16.5f)) & 0xff;
            Le.put8(dst, off + 6 + j, (q0 & 0x0f) | ((q1 & 0x0f) << 4));
            qh |= ((q0 & 0x10) >>> 4) << j;
            qh |= ((q1 & 0x10) >>> 4) << (j + 16);
        }
        Le.put32(dst, off + 2, qh);
    }
}
