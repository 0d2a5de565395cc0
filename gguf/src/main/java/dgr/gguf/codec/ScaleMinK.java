package dgr.gguf.codec;

import java.lang.foreign.MemorySegment;

/**
 * What Q4_K and Q5_K share: f16 d and dmin, then 12 bytes of eight 6-bit scales and mins, and 8
 * sub-blocks of 32 values with {@code x = (d·sc)·q − (dmin·m)} in that float order
 * (dequantize_row_q4_K / _q5_K). They differ in the bits per value (4, or 5 with the fifth in
 * {@code qh}) and the fit's constants, which each codec passes.
 */
final class ScaleMinK {
    static final int DMIN = 2, SCALES = 4;

    private ScaleMinK() {}

    /**
     * Decodes one block at {@code off}: low 4 bits from {@code qs} (sub-block pairs share 32
     * bytes, low nibble first), the fifth from {@code qh} (bit pair per sub-block pair) where
     * {@code qh >= 0}.
     */
    static void decode(MemorySegment src, long off, float[] dst, int d, int qs, int qh) {
        float dAll = Le.f16(src, off);
        float min = Le.f16(src, off + DMIN);
        int[] sc = new int[12];
        for (int k = 0; k < 12; k++) sc[k] = Le.u8(src, off + SCALES + k);
        int y = d;
        long q = off + qs;
        int u1 = 1, u2 = 2;
        for (int is = 0; is < 8; is += 2, q += 32, u1 <<= 2, u2 <<= 2) {
            float d1 = dAll * KQuantFit.scaleK4(is, sc);
            float m1 = min * KQuantFit.minK4(is, sc);
            float d2 = dAll * KQuantFit.scaleK4(is + 1, sc);
            float m2 = min * KQuantFit.minK4(is + 1, sc);
            for (int l = 0; l < 32; ++l) {
                int h = qh >= 0 && (Le.u8(src, off + qh + l) & u1) != 0 ? 16 : 0;
                dst[y++] = d1 * ((Le.u8(src, q + l) & 0xf) + h) - m1;
            }
            for (int l = 0; l < 32; ++l) {
                int h = qh >= 0 && (Le.u8(src, off + qh + l) & u2) != 0 ? 16 : 0;
                dst[y++] = d2 * ((Le.u8(src, q + l) >>> 4) + h) - m2;
            }
        }
    }

    /**
     * Fits the block's scales and mins as quantize_row_q4_K/_q5_K do ({@code make_qkx2_quants}
     * with {@code nmax}, {@code rmin}, step 0.1 and {@code nstep} per sub-block), writes d, dmin and
     * the packed 6-bit scales, and leaves in {@code L} every value requantized against the stored
     * ones, in {@code [0, nmax]}.
     */
    static void fit(float[] x, int s, byte[] L, int nmax, float rmin, int nstep, MemorySegment dst, long off) {
        byte[] laux = new byte[32];
        float[] weights = new float[32];
        float[] mins = new float[8];
        float[] scales = new float[8];
        float[] minOut = new float[1];

        float maxScale = 0, maxMin = 0;
        for (int j = 0; j < 8; ++j) {
            KQuantFit.rmsPlusAbsWeights(x, s + 32 * j, weights);
            scales[j] = KQuantFit.makeQkx2Quants(32, nmax, x, s + 32 * j, weights, L, 32 * j, minOut, laux,
                    rmin, 0.1f, nstep, false);
            mins[j] = minOut[0];
            if (scales[j] > maxScale) maxScale = scales[j];
            if (mins[j] > maxMin) maxMin = mins[j];
        }
        int[] sc = KQuantFit.packScaleMinK4(scales, mins, maxScale, maxMin);
        Le.putF16(dst, off, maxScale / 63.f);
        Le.putF16(dst, off + DMIN, maxMin / 63.f);
        float dq = Le.f16(dst, off);
        float dminq = Le.f16(dst, off + DMIN);

        // Requantize against the stored 6-bit scales/mins and f16 d/dmin.
        for (int j = 0; j < 8; ++j) {
            float dj = dq * KQuantFit.scaleK4(j, sc);
            if (dj == 0) continue;
            float dm = dminq * KQuantFit.minK4(j, sc);
            for (int ii = 0; ii < 32; ++ii) {
                int l = CRound.nearestInt((x[s + 32 * j + ii] + dm) / dj);
                L[32 * j + ii] = (byte) Math.max(0, Math.min(nmax, l));
            }
        }
        for (int k = 0; k < 12; k++) Le.put8(dst, off + SCALES + k, sc[k]);
    }
}
