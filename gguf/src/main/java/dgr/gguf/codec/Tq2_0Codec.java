package dgr.gguf.codec;

import dgr.gguf.GgmlType;
import java.lang.foreign.MemorySegment;

/**
 * TQ2_0 (ternary, 2 bits per value; TriLM and BitNet b1.58 conversions): u8 qs[64]; f16 d. Byte
 * {@code 32c + m} holds values {@code 128c + 32n + m} for {@code n} = 0..3 in bits {@code 2n..2n+1},
 * each a trit {@code q} in 0..2 for the value {@code (q − 1)·d}. quantize_row_tq2_0_ref:
 * {@code d = amax}, {@code q = lroundf(x/d) + 1}.
 */
final class Tq2_0Codec extends BlockLoop {
    Tq2_0Codec() { super(GgmlType.TQ2_0); }

    @Override
    void decodeBlock(MemorySegment src, long off, float[] dst, int d) {
        float scale = Le.f16(src, off + 64);
        for (int c = 0; c < 2; c++) {
            for (int n = 0; n < 4; n++) {
                for (int m = 0; m < 32; m++) {
                    int q = (Le.u8(src, off + 32 * c + m) >> (2 * n)) & 3;
                    dst[d + 128 * c + 32 * n + m] = (float) (q - 1) * scale;
                }
            }
        }
    }

    @Override
    void encodeBlock(float[] src, int s, MemorySegment dst, long off) {
        float amax = 0f;
        for (int j = 0; j < 256; j++) amax = Math.max(amax, Math.abs(src[s + j]));
        float id = amax != 0 ? 1.0f / amax : 0.0f;
        Le.putF16(dst, off + 64, amax);
        for (int c = 0; c < 2; c++) {
            for (int m = 0; m < 32; m++) {
                int q = 0;
                for (int n = 0; n < 4; n++) q += ((CRound.roundf(src[s + 128 * c + 32 * n + m] * id) + 1) & 3) << (2 * n);
                Le.put8(dst, off + 32 * c + m, q);
            }
        }
    }
}
