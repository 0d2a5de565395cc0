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
        Block32.decodeOffset(src, off + 4, 0, Le.f16(src, off), Le.f16(src, off + 2), dst, d);
    }

    @Override
    void encodeBlock(float[] src, int s, MemorySegment dst, long off) {
        float[] range = Block32.minMax(src, s);
        float min = range[0], max = range[1];
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
