package dgr.gguf.codec;

import dgr.gguf.GgmlType;
import java.lang.foreign.MemorySegment;

/**
 * Q4_K: f16 d; f16 dmin; u8 scales[12] (8 × 6-bit scales + 8 × 6-bit mins); u8 qs[128].
 * 8 sub-blocks of 32 values; x = (d·sc)·q − (dmin·m), in that float order (dequantize_row_q4_K).
 */
final class Q4_KCodec extends BlockLoop {
    private static final int DMIN = 2, SCALES = 4, QS = 16;

    Q4_KCodec() { super(GgmlType.Q4_K); }

    @Override
    void decodeBlock(MemorySegment src, long off, float[] dst, int d) {
        float dAll = Le.f16(src, off);
        float min = Le.f16(src, off + DMIN);
        int[] sc = new int[12];
        for (int k = 0; k < 12; k++) sc[k] = Le.u8(src, off + SCALES + k);
        int y = d;
        long q = off + QS;
        for (int is = 0; is < 8; is += 2, q += 32) {
            float d1 = dAll * KQuantFit.scaleK4(is, sc);
            float m1 = min * KQuantFit.minK4(is, sc);
            float d2 = dAll * KQuantFit.scaleK4(is + 1, sc);
            float m2 = min * KQuantFit.minK4(is + 1, sc);
            for (int l = 0; l < 32; ++l) dst[y++] = d1 * (Le.u8(src, q + l) & 0xf) - m1;
            for (int l = 0; l < 32; ++l) dst[y++] = d2 * (Le.u8(src, q + l) >>> 4) - m2;
        }
    }

    @Override
    void encodeBlock(float[] x, int s, MemorySegment dst, long off) {
        byte[] L = new byte[256];
        byte[] laux = new byte[32];
        float[] weights = new float[32];
        float[] mins = new float[8];
        float[] scales = new float[8];
        float[] minOut = new float[1];

        float maxScale = 0, maxMin = 0;
        for (int j = 0; j < 8; ++j) {
            KQuantFit.rmsPlusAbsWeights(x, s + 32 * j, weights);
            scales[j] = KQuantFit.makeQkx2Quants(32, 15, x, s + 32 * j, weights, L, 32 * j, minOut, laux,
                    -1.f, 0.1f, 20, false);
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
                L[32 * j + ii] = (byte) Math.max(0, Math.min(15, l));
            }
        }

        for (int k = 0; k < 12; k++) Le.put8(dst, off + SCALES + k, sc[k]);
        for (int j = 0; j < 256; j += 64) {
            for (int l = 0; l < 32; ++l) Le.put8(dst, off + QS + j / 2 + l, L[j + l] | (L[j + l + 32] << 4));
        }
    }
}
