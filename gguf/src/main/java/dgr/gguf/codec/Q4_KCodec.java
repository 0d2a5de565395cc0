package dgr.gguf.codec;

import dgr.gguf.GgmlType;
import java.lang.foreign.MemorySegment;

/**
 * Q4_K: f16 d; f16 dmin; u8 scales[12] (8 × 6-bit scales + 8 × 6-bit mins); u8 qs[128].
 * 8 sub-blocks of 32 values; x = (d·sc)·q − (dmin·m), in that float order (dequantize_row_q4_K);
 * what it shares with Q5_K is {@link ScaleMinK}.
 */
final class Q4_KCodec extends BlockLoop {
    private static final int QS = 16;

    Q4_KCodec() { super(GgmlType.Q4_K); }

    @Override
    void decodeBlock(MemorySegment src, long off, float[] dst, int d) {
        ScaleMinK.decode(src, off, dst, d, QS, -1);
    }

    @Override
    void encodeBlock(float[] x, int s, MemorySegment dst, long off) {
        byte[] L = new byte[256];
        ScaleMinK.fit(x, s, L, 15, -1.f, 20, dst, off);
        for (int j = 0; j < 256; j += 64) {
            for (int l = 0; l < 32; ++l) Le.put8(dst, off + QS + j / 2 + l, L[j + l] | (L[j + l + 32] << 4));
        }
    }
}
