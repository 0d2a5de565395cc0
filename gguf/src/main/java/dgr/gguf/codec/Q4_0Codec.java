package dgr.gguf.codec;

import dgr.gguf.GgmlType;
import java.lang.foreign.MemorySegment;

/**
 * Q4_0: f16 d; u8 qs[16]; x[j] = d·((qs[j] & 15) − 8), x[j+16] = d·((qs[j] >> 4) − 8).
 * quantize_row_q4_0_ref: d = (signed value of largest magnitude) / −8, so that value maps to −8
 * exactly and the other side gets the extra level 7.
 */
final class Q4_0Codec extends BlockLoop {
    Q4_0Codec() { super(GgmlType.Q4_0); }

    @Override
    void decodeBlock(MemorySegment src, long off, float[] dst, int d) {
        Block32.decodeSymmetric(src, off + 2, 0, Le.f16(src, off), 8, dst, d);
    }

    @Override
    void encodeBlock(float[] src, int s, MemorySegment dst, long off) {
        float d = Block32.signedMax(src, s) / -8;
        float id = d != 0 ? 1.0f / d : 0.0f;
        Le.putF16(dst, off, d);
        for (int j = 0; j < 16; j++) {
            int q0 = Math.min(15, CRound.truncToInt8(src[s + j] * id + 8.5f));
            int q1 = Math.min(15, CRound.truncToInt8(src[s + 16 + j] * id + 8.5f));
            Le.put8(dst, off + 2 + j, (q0 & 0xff) | (q1 << 4));
        }
    }
}
