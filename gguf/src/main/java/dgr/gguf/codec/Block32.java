package dgr.gguf.codec;

import java.lang.foreign.MemorySegment;

/**
 * What the 32-value sibling types share (Q4_0/Q5_0, Q4_1/Q5_1, Q8_0/Q8_1): the scans that choose a
 * block's scale, and the 4-bit layout with its optional fifth bits. Low nibbles are values 0–15,
 * high nibbles 16–31; the fifth bit of value {@code j} is bit {@code j} of the u32 {@code qh}.
 * Each codec keeps its own rounding rule, where the siblings differ.
 */
final class Block32 {
    private Block32() {}

    /** The value of largest magnitude in {@code src[s .. s+32)}, the first among equals (quantize_row_q4_0/q5_0_ref). */
    static float signedMax(float[] src, int s) {
        float amax = 0f, max = 0f;
        for (int j = 0; j < 32; j++) {
            float v = src[s + j];
            if (amax < Math.abs(v)) {
                amax = Math.abs(v);
                max = v;
            }
        }
        return max;
    }

    /** The largest magnitude, as ggml's {@code MAX} macro takes it (so a NaN behaves as in llama.cpp). */
    static float amax(float[] src, int s) {
        float amax = 0f;
        for (int j = 0; j < 32; j++) {
            float a = Math.abs(src[s + j]);
            amax = amax > a ? amax : a;
        }
        return amax;
    }

    /** {@code {min, max}} of {@code src[s .. s+32)} (quantize_row_q4_1/q5_1_ref). */
    static float[] minMax(float[] src, int s) {
        float min = Float.MAX_VALUE, max = -Float.MAX_VALUE;
        for (int j = 0; j < 32; j++) {
            float v = src[s + j];
            if (v < min) min = v;
            if (v > max) max = v;
        }
        return new float[] {min, max};
    }

    /**
     * Value {@code j}'s quant: its nibble from the 16 bytes at {@code qs}, plus 16 where its bit of
     * {@code qh} is set (pass 0 for the 4-bit types).
     */
    static int quant(MemorySegment src, long qs, int qh, int j) {
        int q = Le.u8(src, qs + (j & 15));
        return j < 16 ? (q & 0x0f) | (((qh >>> j) << 4) & 0x10) : (q >>> 4) | ((qh >>> (j - 4)) & 0x10);
    }

    /** Decodes {@code x = (q − zero)·scale} (Q4_0: zero 8, Q5_0: 16). */
    static void decodeSymmetric(MemorySegment src, long qs, int qh, float scale, int zero, float[] dst, int d) {
        for (int j = 0; j < 32; j++) dst[d + j] = (quant(src, qs, qh, j) - zero) * scale;
    }

    /** Decodes {@code x = q·scale + m} (Q4_1, Q5_1). */
    static void decodeOffset(MemorySegment src, long qs, int qh, float scale, float m, float[] dst, int d) {
        for (int j = 0; j < 32; j++) dst[d + j] = quant(src, qs, qh, j) * scale + m;
    }

    /** Packs 32 quants of 5 bits: nibbles into the 16 bytes at {@code qs}, fifth bits returned as {@code qh}. */
    static int pack5(int[] q, MemorySegment dst, long qs) {
        int qh = 0;
        for (int j = 0; j < 16; j++) {
            Le.put8(dst, qs + j, (q[j] & 0x0f) | ((q[j + 16] & 0x0f) << 4));
            qh |= ((q[j] & 0x10) >>> 4) << j;
            qh |= ((q[j + 16] & 0x10) >>> 4) << (j + 16);
        }
        return qh;
    }
}
