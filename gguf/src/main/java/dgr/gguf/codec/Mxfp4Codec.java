package dgr.gguf.codec;

import dgr.gguf.GgmlType;
import java.lang.foreign.MemorySegment;

/**
 * MXFP4 (OCP microscaling FP4, gpt-oss's experts): u8 e; u8 qs[16]; value {@code j} is
 * {@code VALUES[qs[j] & 15]·2^(e−128)}, value {@code j + 16} {@code VALUES[qs[j] >> 4]·2^(e−128)}:
 * the E2M1 values doubled, times half the E8M0 scale, as ggml stores them. Every value is exact in
 * float32 ({@code e = 0} and 1 give subnormal scales). quantize_row_mxfp4_ref: {@code e} from the
 * block's largest magnitude ({@code floor(log2 amax) − 2 + 127}, 0 for an all-zero block), then
 * each value's nearest point (the lower index on a tie).
 */
final class Mxfp4Codec extends BlockLoop {
    /** E2M1's values ×2, indices 8–15 the negatives (8 is −0). */
    static final int[] VALUES = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

    Mxfp4Codec() { super(GgmlType.MXFP4); }

    /** ggml's GGML_E8M0_TO_FP32_HALF: {@code 2^(e−128)}, bit-built so that e = 0 and 1 stay exact subnormals. */
    static float halfScale(int e) {
        return Float.intBitsToFloat(e < 2 ? 0x00200000 << e : (e - 1) << 23);
    }

    @Override
    void decodeBlock(MemorySegment src, long off, float[] dst, int d) {
        float s = halfScale(Le.u8(src, off));
        for (int j = 0; j < 16; j++) {
            int q = Le.u8(src, off + 1 + j);
            dst[d + j] = VALUES[q & 15] * s;
            dst[d + j + 16] = VALUES[q >> 4] * s;
        }
    }

    @Override
    void encodeBlock(float[] src, int s, MemorySegment dst, long off) {
        float amax = 0;
        for (int j = 0; j < 32; j++) amax = Math.max(amax, Math.abs(src[s + j]));
        int e = amax > 0 ? Math.getExponent(amax) - 2 + 127 : 0; // getExponent: floor(log2) exactly for normal floats
        e = Math.max(0, Math.min(255, e));
        float scale = halfScale(e);
        Le.put8(dst, off, e);
        for (int j = 0; j < 16; j++) Le.put8(dst, off + 1 + j, nearest(src[s + j], scale) | nearest(src[s + j + 16], scale) << 4);
    }

    private static int nearest(float x, float scale) {
        int best = 0;
        float bestErr = Math.abs(VALUES[0] * scale - x);
        for (int i = 1; i < 16; i++) {
            float err = Math.abs(VALUES[i] * scale - x);
            if (err < bestErr) {
                best = i;
                bestErr = err;
            }
        }
        return best;
    }
}
