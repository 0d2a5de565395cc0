package dgr.gguf.codec;

import dgr.gguf.GgmlType;
import java.lang.foreign.MemorySegment;

/**
 * Q8_K: f32 d; int8 qs[256]; int16 bsums[16] (sum of each group of 16 qs). The activation type
 * llama.cpp pairs with K-quant weights; bsums let a dot product apply the weights' mins cheaply.
 * quantize_row_q8_K_ref: the value of largest magnitude maps to −127 exactly.
 */
final class Q8_KCodec extends BlockLoop {
    private static final int QS = 4, BSUMS = 260;

    Q8_KCodec() { super(GgmlType.Q8_K); }

    @Override
    void decodeBlock(MemorySegment src, long off, float[] dst, int d) {
        float scale = Le.f32(src, off);
        for (int j = 0; j < 256; j++) dst[d + j] = scale * Le.i8(src, off + QS + j);
    }

    @Override
    void encodeBlock(float[] x, int s, MemorySegment dst, long off) {
        float max = 0, amax = 0;
        for (int j = 0; j < 256; ++j) {
            float ax = Math.abs(x[s + j]);
            if (ax > amax) {
                amax = ax;
                max = x[s + j];
            }
        }
        if (amax == 0) {
            // ggml leaves bsums unwritten here; zero is what they sum to, so write that.
            dst.asSlice(off, GgmlType.Q8_K.blockBytes).fill((byte) 0);
            return;
        }
        float iscale = -127.f / max;
        for (int j = 0; j < 256; ++j) Le.put8(dst, off + QS + j, Math.min(127, CRound.nearestInt(iscale * x[s + j])));
        for (int j = 0; j < 16; ++j) {
            int sum = 0;
            for (int ii = 0; ii < 16; ++ii) sum += Le.i8(dst, off + QS + 16 * j + ii);
            Le.put16(dst, off + BSUMS + 2 * j, sum);
        }
        Le.putF32(dst, off, 1 / iscale);
    }
}
