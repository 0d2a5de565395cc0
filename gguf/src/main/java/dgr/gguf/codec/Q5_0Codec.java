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
        Block32.decodeSymmetric(src, off + 6, Le.i32(src, off + 2), Le.f16(src, off), 16, dst, d);
    }

    @Override
    void encodeBlock(float[] src, int s, MemorySegment dst, long off) {
        float d = Block32.signedMax(src, s) / -16;
        float id = d != 0 ? 1.0f / d : 0.0f;
        Le.putF16(dst, off, d);
        int[] q = new int[32];
        for (int j = 0; j < 32; j++) q[j] = Math.min(31, CRound.truncToInt8(src[s + j] * id + 16.5f)) & 0xff;
        Le.put32(dst, off + 2, Block32.pack5(q, dst, off + 6));
    }
}
