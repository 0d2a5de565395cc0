package dgr.gguf.codec;

import dgr.gguf.GgmlType;
import java.lang.foreign.MemorySegment;

/**
 * Q5_K: f16 d; f16 dmin; u8 scales[12] (as Q4_K); u8 qh[32]; u8 qs[128].
 * Q4_K plus a 5th bit per value from qh; x = (d·sc)·q − (dmin·m) (dequantize_row_q5_K); what it
 * shares with Q4_K is {@link ScaleMinK}.
 */
final class Q5_KCodec extends BlockLoop {
    private static final int QH = 16, QS = 48;

    Q5_KCodec() { super(GgmlType.Q5_K); }

    @Override
    void decodeBlock(MemorySegment src, long off, float[] dst, int d) {
        ScaleMinK.decode(src, off, dst, d, QS, QH);
    }

    @Override
    void encodeBlock(float[] x, int s, MemorySegment dst, long off) {
        byte[] L = new byte[256];
        ScaleMinK.fit(x, s, L, 31, -0.5f, 15, dst, off);
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
