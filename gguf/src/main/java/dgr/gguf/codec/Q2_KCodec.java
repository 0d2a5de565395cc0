package dgr.gguf.codec;

import dgr.gguf.GgmlType;
import java.lang.foreign.MemorySegment;

/**
 * Q2_K: u8 scales[16] (low nibble scale, high nibble min); u8 qs[64] (2-bit); f16 d; f16 dmin.
 * 16 sub-blocks of 16 values; x = (d·sc)·q − (dmin·m), in that float order (dequantize_row_q2_K).
 */
final class Q2_KCodec extends BlockLoop {
    private static final int QS = 16, D = 80, DMIN = 82;

    Q2_KCodec() { super(GgmlType.Q2_K); }

    @Override
    void decodeBlock(MemorySegment src, long off, float[] dst, int d) {
        float dAll = Le.f16(src, off + D);
        float min = Le.f16(src, off + DMIN);
        int y = d;
        int is = 0;
        for (int n = 0; n < 256; n += 128) {
            long q = off + QS + n / 4;
            for (int shift = 0; shift < 8; shift += 2) {
                for (int half = 0; half < 32; half += 16) {
                    int sc = Le.u8(src, off + is++);
                    float dl = dAll * (sc & 0xf);
                    float ml = min * (sc >>> 4);
                    for (int l = 0; l < 16; ++l) dst[y++] = dl * ((Le.u8(src, q + half + l) >>> shift) & 3) - ml;
                }
            }
        }
    }

    @Override
    void encodeBlock(float[] x, int s, MemorySegment dst, long off) {
        byte[] L = new byte[256];
        byte[] laux = new byte[16];
        float[] weights = new float[16];
        float[] mins = new float[16];
        float[] scales = new float[16];
        float[] minOut = new float[1];
        final float q4scale = 15.f;

        float maxScale = 0, maxMin = 0;
        for (int j = 0; j < 16; ++j) {
            for (int l = 0; l < 16; ++l) weights[l] = Math.abs(x[s + 16 * j + l]);
            scales[j] = KQuantFit.makeQkx2Quants(16, 3, x, s + 16 * j, weights, L, 16 * j, minOut, laux,
                    -0.5f, 0.1f, 15, true);
            mins[j] = minOut[0];
            if (scales[j] > maxScale) maxScale = scales[j];
            if (mins[j] > maxMin) maxMin = mins[j];
        }

        int[] packed = new int[16];
        float d = 0f, dmin = 0f;
        if (maxScale > 0) {
            float iscale = q4scale / maxScale;
            for (int j = 0; j < 16; ++j) packed[j] = CRound.nearestInt(iscale * scales[j]);
            d = maxScale / q4scale;
        }
        if (maxMin > 0) {
            float iscale = q4scale / maxMin;
            for (int j = 0; j < 16; ++j) packed[j] |= CRound.nearestInt(iscale * mins[j]) << 4;
            dmin = maxMin / q4scale;
        }
        for (int j = 0; j < 16; ++j) packed[j] &= 0xff; // the C code stores into uint8_t
        Le.putF16(dst, off + D, d);
        Le.putF16(dst, off + DMIN, dmin);
        float dq = Le.f16(dst, off + D);
        float dminq = Le.f16(dst, off + DMIN);

        // Requantize against the scales as stored (rounded to 4 bits and f16), not the fitted ones.
        for (int j = 0; j < 16; ++j) {
            float dj = dq * (packed[j] & 0xf);
            if (dj == 0) continue;
            float dm = dminq * (packed[j] >>> 4);
            for (int ii = 0; ii < 16; ++ii) {
                int l = CRound.nearestInt((x[s + 16 * j + ii] + dm) / dj);
                L[16 * j + ii] = (byte) Math.max(0, Math.min(3, l));
            }
        }

        for (int j = 0; j < 16; ++j) Le.put8(dst, off + j, packed[j]);
        for (int j = 0; j < 256; j += 128) {
            for (int l = 0; l < 32; ++l) {
                Le.put8(dst, off + QS + j / 4 + l,
                        L[j + l] | (L[j + l + 32] << 2) | (L[j + l + 64] << 4) | (L[j + l + 96] << 6));
            }
        }
    }
}
