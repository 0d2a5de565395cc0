package dgr.gguf.codec;

/**
 * The non-linear 4-bit grid of IQ4_NL and IQ4_XS and llama.cpp's search for a block's scale on it
 * (ggml-quants.c: {@code kvalues_iq4nl}, {@code best_index_int8}, {@code quantize_row_iq4_nl_impl}
 * without importance weights), with the same float operations in the same order. llama.cpp's C may
 * be compiled with contracted multiply-adds, so a search here can land on a different but equally
 * valid encoding; decoding is exact either way.
 */
public final class Iq4Fit {
    /** The sixteen values a 4-bit index stands for, times the block scale. */
    static final byte[] VALUES = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};
    /** Scales tried on each side of the first guess. */
    private static final int NTRY = 7;

    private Iq4Fit() {}

    /** The grid value of a 4-bit index (0..15): −127 … 113. */
    public static int value(int index) {
        return VALUES[index];
    }

    /** The grid index nearest {@code x}, a tie going to the upper one, as best_index_int8. */
    static int nearest(float x) {
        if (x <= VALUES[0]) return 0;
        if (x >= VALUES[15]) return 15;
        int lo = 0, hi = 15;
        while (hi - lo > 1) {
            int mid = (lo + hi) / 2;
            if (x < VALUES[mid]) hi = mid; else lo = mid;
        }
        return x - VALUES[hi - 1] < VALUES[hi] - x ? hi - 1 : hi;
    }

    /**
     * The best scale for the 32 values at {@code x[xo ..]}, weighted by their squares: the grid's
     * end at the largest magnitude, then {@code 2·NTRY + 1} rescalings, keeping the one with the
     * largest {@code (Σwqx)² / Σwq²}. Returns 0 for an all-zero block.
     */
    static float blockScale(float[] x, int xo) {
        float amax = 0, max = 0;
        for (int j = 0; j < 32; j++) {
            float ax = Math.abs(x[xo + j]);
            if (ax > amax) {
                amax = ax;
                max = x[xo + j];
            }
        }
        if (amax < KQuantFit.GROUP_MAX_EPS) return 0f;
        float d = -max / VALUES[0];
        float id = 1 / d;
        float sumqx = 0, sumq2 = 0;
        for (int j = 0; j < 32; j++) {
            float xj = x[xo + j], w = xj * xj, q = VALUES[nearest(id * xj)];
            sumqx += w * q * xj;
            sumq2 += w * q * q;
        }
        d = sumqx / sumq2;
        float best = d * sumqx;
        for (int itry = -NTRY; itry <= NTRY; itry++) {
            id = (itry + VALUES[0]) / max;
            sumqx = 0;
            sumq2 = 0;
            for (int j = 0; j < 32; j++) {
                float xj = x[xo + j], w = xj * xj, q = VALUES[nearest(id * xj)];
                sumqx += w * q * xj;
                sumq2 += w * q * q;
            }
            if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
                d = sumqx / sumq2;
                best = d * sumqx;
            }
        }
        return d;
    }

    /**
     * Writes the 32 values at {@code x[xo ..]} as indices on the grid scaled by {@code 1/inv}:
     * value {@code j} in the low nibble of byte {@code j}, value {@code j + 16} in its high nibble.
     */
    static void packIndices(float[] x, int xo, float inv, java.lang.foreign.MemorySegment dst, long off) {
        for (int j = 0; j < 16; j++) {
            int lo = nearest(inv * x[xo + j]), hi = nearest(inv * x[xo + 16 + j]);
            Le.put8(dst, off + j, lo | (hi << 4));
        }
    }

    /** Decodes 32 values from 16 index bytes at {@code off}, each {@code scale · VALUES[index]}. */
    static void unpack(java.lang.foreign.MemorySegment src, long off, float scale, float[] dst, int d) {
        for (int j = 0; j < 16; j++) {
            int q = Le.u8(src, off + j);
            dst[d + j] = scale * VALUES[q & 0xF];
            dst[d + j + 16] = scale * VALUES[q >>> 4];
        }
    }
}
