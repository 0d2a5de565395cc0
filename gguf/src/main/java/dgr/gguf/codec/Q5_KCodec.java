package dgr.gguf.codec;

import dgr.gguf.GgmlType;
import java.lang.foreign.MemorySegment;

/**
 * Q5_K: f16 d; f16 dmin; u8 scales[12] (as Q4_K); u8 qh[32]; u8 qs[128].
 * Q4_K plus a 5th bit per value from qh; x = (d·sc)·q − (dmin·m) (dequantize_row_q5_K).
 */
final class Q5_KCodec extends BlockLoop {
    private static final int DMIN = 2, SCALES = 4, QH = 16, QS = 48;

    Q5_KCodec() { super(GgmlType.Q5_K); }

    @Override
    void decodeBlock(MemorySegment src, long off, float[] dst, int d) {
        float dAll = Le.f16(src, off);
        float min = Le.f16(src, off + DMIN);
        int[] sc = new int[12];
        for (int k = 0; k < 12; k++) sc[k] = Le.u8(src, off + SCALES + k);
        int y = d;
        long ql = off + QS;
        int u1 = 1, u2 = 2;
        for (int is = 0; is < 8; is += 2, ql += 32, u1 <<= 2, u2 <<= 2) {
            float d1 = dAll * KQuantFit.scaleK4(is, sc);
            float m1 = min * KQuantFit.minK4(is, sc);
            float d2 = dAll * KQuantFit.scaleK4(is + 1, sc);
            float m2 = min * KQuantFit.minK4(is + 1, sc);
            for (int l = 0; l < 32; ++l) {
                int h = (Le.u8(src, off + QH + l) & u1) != 0 ? 16 : 0;
                dst[y++] = d1 * ((Le.u8(src, ql + l) & 0xf) + h) - m1;
            }
            for (int l = 0; l < 32; ++l) {
                int h = (Le.u8(src, off + QH + l) & u2) != 0 ? 16 : 0;
                dst[y++] = d2 * ((Le.u8(src, ql + l) >>> 4) + h) - m2;
            }
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
            scales[j] = KQuantFit.makeQkx2Quants(32, 31, x, s + 32 * j, weights, L, 32 * j, minOut, laux,
                    -0.5f, 0.1f, 15, false);
            mins[j] = minOut[0];
            if (scales[j] > maxScale) maxScale = scales[j];
            if (mins[j] > maxMin) maxMin = mins[j];
        }
        int[] sc = KQuantFit.packScaleMinK4(scales, mins, maxScale, maxMin);
        Le.putF16(dst, off, maxScale / 63.f);
        Le.putF16(dst, off + DMIN, maxMin / 63.f);
        float dq = Le.f16(dst, off);
        float dminq = Le.f16(dst, off + DMIN);

        for (int j = 0; j < 8; ++j) {
            float dj = dq * KQuantFit.scaleK4(j, sc);
            if (dj == 0) continue;
            float dm = dminq * KQuantFit.minK4(j, sc);
            for (int ii = 0; ii < 32; ++ii) {
                int l = CRound.nearestInt((x[s + 32 * j + ii] + dm) / dj);
                L[32 * j + ii] = (byte) Math.max(0, Math.min(31, l));
            }
        }

        for (int k = 0; k < 12; k++) Le.put8(dst, off + SCALES + k, sc[k]);
        int[] qh = new int[32];
        int m1 = 1, m2 = 2;
        for (int n = 0; n < 256; n += 64, m1 <<= 2, m2 <<= 2) {
            for (int j = 0; j < 32; ++j) {
                int l1 = L[n + j];
                if (l1 > 15) {
                    l1 -= 16;
                    qh[j] |= m1;
                }
                int l2 = L[n + j + 32];
                if (l2 > 15) {
                    l2 -= 16;
                    qh[j] |= m2;
                }
                Le.put8(dst, off + QS + n / 2 + j, l1 | (l2 << 4));
            }
        }
        for (int j = 0; j < 32; j++) Le.put8(dst, off + QH + j, qh[j]);
    }
}
