package dgr.gguf.codec;

import dgr.gguf.GgmlType;
import java.lang.foreign.MemorySegment;

/**
 * Q3_K: u8 hmask[32]; u8 qs[64] (low 2 bits); u8 scales[12] (16 × 6-bit, offset 32); f16 d.
 * 16 sub-blocks of 16 values; x = (d·(sc − 32))·(q − (high bit ? 0 : 4)) (dequantize_row_q3_K).
 */
final class Q3_KCodec extends BlockLoop {
    private static final int QS = 32, SCALES = 96, D = 108;

    Q3_KCodec() { super(GgmlType.Q3_K); }

    /** The j-th 6-bit scale: low 4 bits from bytes 0..7, high 2 bits from bytes 8..11. */
    private static int scale(int[] sc, int j) {
        int low = j < 8 ? sc[j] & 0xf : sc[j - 8] >>> 4;
        int high = (sc[8 + j % 4] >>> (2 * (j / 4))) & 3;
        return low | (high << 4);
    }

    @Override
    void decodeBlock(MemorySegment src, long off, float[] dst, int d) {
        float dAll = Le.f16(src, off + D);
        int[] sc = new int[12];
        for (int k = 0; k < 12; k++) sc[k] = Le.u8(src, off + SCALES + k);
        int y = d;
        int is = 0;
        int m = 1;
        for (int n = 0; n < 256; n += 128) {
            long q = off + QS + n / 4;
            for (int shift = 0; shift < 8; shift += 2, m <<= 1) {
                for (int half = 0; half < 32; half += 16) {
                    float dl = dAll * (scale(sc, is++) - 32);
                    for (int l = 0; l < 16; ++l) {
                        int lo = (Le.u8(src, q + half + l) >>> shift) & 3;
                        int hi = (Le.u8(src, off + half + l) & m) != 0 ? 0 : 4;
                        dst[y++] = dl * (lo - hi);
                    }
                }
            }
        }
    }

    @Override
    void encodeBlock(float[] x, int s, MemorySegment dst, long off) {
        byte[] L = new byte[256];
        float[] scales = new float[16];

        float maxScale = 0, amax = 0;
        for (int j = 0; j < 16; ++j) {
            scales[j] = KQuantFit.makeQ3Quants(16, 4, x, s + 16 * j, L, 16 * j);
            float a = Math.abs(scales[j]);
            if (a > amax) {
                amax = a;
                maxScale = scales[j];
            }
        }

        int[] sc = new int[12];
        float d = 0f;
        if (maxScale != 0) {
            float iscale = -32.f / maxScale;
            for (int j = 0; j < 16; ++j) {
                int l = (byte) CRound.nearestInt(iscale * scales[j]); // C stores it in an int8_t first
                l = Math.max(-32, Math.min(31, l)) + 32;
                if (j < 8) sc[j] = l & 0xf;
                else sc[j - 8] |= (l & 0xf) << 4;
                l >>= 4;
                sc[j % 4 + 8] |= l << (2 * (j / 4));
            }
            d = 1 / iscale;
        }
        Le.putF16(dst, off + D, d);
        float dq = Le.f16(dst, off + D);

        // Requantize against the stored 6-bit scales and f16 d.
        for (int j = 0; j < 16; ++j) {
            float dj = dq * (scale(sc, j) - 32);
            if (dj == 0) continue;
            for (int ii = 0; ii < 16; ++ii) {
                int l = CRound.nearestInt(x[s + 16 * j + ii] / dj);
                L[16 * j + ii] = (byte) (Math.max(-4, Math.min(3, l)) + 4);
            }
        }

        // High bit of value j goes to hmask[j % 32], bit j / 32.
        int[] hmask = new int[32];
        for (int j = 0; j < 256; ++j) {
            if (L[j] > 3) {
                hmask[j % 32] |= 1 << (j / 32);
                L[j] -= 4;
            }
        }
        for (int k = 0; k < 32; k++) Le.put8(dst, off + k, hmask[k]);
        for (int j = 0; j < 256; j += 128) {
            for (int l = 0; l < 32; ++l) {
                Le.put8(dst, off + QS + j / 4 + l,
                        L[j + l] | (L[j + l + 32] << 2) | (L[j + l + 64] << 4) | (L[j + l + 96] << 6));
            }
        }
        for (int k = 0; k < 12; k++) Le.put8(dst, off + SCALES + k, sc[k]);
    }
}
