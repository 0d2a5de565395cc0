package dgr.gguf.codec;

import dgr.gguf.GgmlType;
import java.lang.foreign.MemorySegment;

/**
 * Q6_K: u8 ql[128] (low 4 bits); u8 qh[64] (high 2 bits); int8 scales[16]; f16 d.
 * 16 sub-blocks of 16 values; x = (d·scale)·(q − 32), in that float order (dequantize_row_q6_K).
 */
final class Q6_KCodec extends BlockLoop {
    private static final int QH = 128, SCALES = 192, D = 208;

    Q6_KCodec() { super(GgmlType.Q6_K); }

    @Override
    void decodeBlock(MemorySegment src, long off, float[] dst, int d) {
        float dAll = Le.f16(src, off + D);
        for (int n = 0; n < 2; n++) {
            long ql = off + 64L * n;
            long qh = off + QH + 32L * n;
            long sc = off + SCALES + 8L * n;
            int y = d + 128 * n;
            for (int l = 0; l < 32; ++l) {
                int is = l / 16;
                int lo0 = Le.u8(src, ql + l), lo1 = Le.u8(src, ql + l + 32), hi = Le.u8(src, qh + l);
                int q1 = ((lo0 & 0xf) | ((hi & 3) << 4)) - 32;
                int q2 = ((lo1 & 0xf) | (((hi >>> 2) & 3) << 4)) - 32;
                int q3 = ((lo0 >>> 4) | (((hi >>> 4) & 3) << 4)) - 32;
                int q4 = ((lo1 >>> 4) | (((hi >>> 6) & 3) << 4)) - 32;
                dst[y + l] = dAll * Le.i8(src, sc + is) * q1;
                dst[y + l + 32] = dAll * Le.i8(src, sc + is + 2) * q2;
                dst[y + l + 64] = dAll * Le.i8(src, sc + is + 4) * q3;
                dst[y + l + 96] = dAll * Le.i8(src, sc + is + 6) * q4;
            }
        }
    }

    @Override
    void encodeBlock(float[] x, int s, MemorySegment dst, long off) {
        byte[] L = new byte[256];
        float[] scales = new float[16];

        float maxScale = 0, maxAbsScale = 0;
        for (int ib = 0; ib < 16; ++ib) {
            scales[ib] = KQuantFit.makeQxQuants(16, 32, x, s + 16 * ib, L, 16 * ib, 1);
            float a = Math.abs(scales[ib]);
            if (a > maxAbsScale) {
                maxAbsScale = a;
                maxScale = scales[ib];
            }
        }
        if (maxAbsScale < KQuantFit.GROUP_MAX_EPS) {
            dst.asSlice(off, GgmlType.Q6_K.blockBytes).fill((byte) 0);
            return;
        }

        float iscale = -128.f / maxScale;
        Le.putF16(dst, off + D, 1 / iscale);
        float dq = Le.f16(dst, off + D);
        int[] sc = new int[16];
        for (int ib = 0; ib < 16; ++ib) {
            sc[ib] = (byte) Math.min(127, CRound.nearestInt(iscale * scales[ib]));
            Le.put8(dst, off + SCALES + ib, sc[ib]);
        }

        // Requantize against the stored int8 scales and f16 d.
        for (int j = 0; j < 16; ++j) {
            float dj = dq * sc[j];
            if (dj == 0) continue;
            for (int ii = 0; ii < 16; ++ii) {
                int l = CRound.nearestInt(x[s + 16 * j + ii] / dj);
                L[16 * j + ii] = (byte) (Math.max(-32, Math.min(31, l)) + 32);
            }
        }

        for (int j = 0; j < 256; j += 128) {
            long ql = off + j / 2;
            long qh = off + QH + j / 4;
            for (int l = 0; l < 32; ++l) {
                int q1 = L[j + l] & 0xf, q2 = L[j + l + 32] & 0xf, q3 = L[j + l + 64] & 0xf, q4 = L[j + l + 96] & 0xf;
                Le.put8(dst, ql + l, q1 | (q3 << 4));
                Le.put8(dst, ql + l + 32, q2 | (q4 << 4));
                Le.put8(dst, qh + l, (L[j + l] >> 4) | ((L[j + l + 32] >> 4) << 2)
                        | ((L[j + l + 64] >> 4) << 4) | ((L[j + l + 96] >> 4) << 6));
            }
        }
    }
}
