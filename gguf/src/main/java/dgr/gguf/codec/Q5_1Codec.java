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
        Block32.decodeOffset(src, off + 8, Le.i32(src, off + 4), Le.f16(src, off), Le.f16(src, off + 2), dst, d);
    }

    @Override
    void encodeBlock(float[] src, int s, MemorySegment dst, long off) {
        float[] range = Block32.minMax(src, s);
        float min = range[0], max = range[1];
        float d = (max - min) / 31;
        float id = d != 0 ? 1.0f / d : 0.0f;
        Le.putF16(dst, off, d);
        Le.putF16(dst, off + 2, min);
        int[] q = new int[32];
        for (int j = 0; j < 32; j++) q[j] = CRound.truncToUint8((src[s + j] - min) * id + 0.5f);
        Le.put32(dst, off + 4, Block32.pack5(q, dst, off + 8));
    }
}
