package dgr.engine.kernel;

import dgr.gguf.GgmlType;
import dgr.gguf.codec.Codecs;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.EnumSet;
import java.util.Set;

/**
 * Plain-Java dequantization of whole weight rows into float32, following ggml's
 * {@code dequantize_row_*} bit for bit (same float operations in the same order). Used by the
 * scalar engine, by the SIMD engine for the less common types and for token embeddings.
 */
public final class RowDecoder {
    public static final Set<GgmlType> SUPPORTED = EnumSet.of(GgmlType.F32, GgmlType.F16, GgmlType.BF16,
            GgmlType.Q8_0, GgmlType.Q4_0, GgmlType.Q4_1, GgmlType.Q5_0, GgmlType.Q5_1,
            GgmlType.Q2_K, GgmlType.Q3_K, GgmlType.Q4_K, GgmlType.Q5_K, GgmlType.Q6_K, GgmlType.IQ4_NL, GgmlType.IQ4_XS, GgmlType.MXFP4, GgmlType.TQ1_0, GgmlType.TQ2_0,
            GgmlType.IQ1_S, GgmlType.IQ1_M, GgmlType.IQ2_XXS, GgmlType.IQ2_XS, GgmlType.IQ2_S, GgmlType.IQ3_XXS, GgmlType.IQ3_S);

    private static final ValueLayout.OfShort I16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfInt I32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private RowDecoder() {}

    public static boolean supports(GgmlType t) {
        return SUPPORTED.contains(t);
    }

    /** Decodes row {@code row} of {@code w} into {@code dst[dstOff .. dstOff + cols)}. */
    public static void decodeRow(WeightMatrix w, int row, float[] dst, int dstOff) {
        decode(w.type(), w.data(), w.rowOffset(row), dst, dstOff, w.cols());
    }

    /** Decodes {@code n} values (whole blocks) starting at byte {@code off} of {@code src}. */
    public static void decode(GgmlType type, MemorySegment src, long off, float[] dst, int dstOff, int n) {
        int nb = n / type.blockValues;
        long bb = type.blockBytes;
        switch (type) {
            case F32 -> { for (int i = 0; i < n; i++) dst[dstOff + i] = src.get(F32, off + 4L * i); }
            case F16 -> { for (int i = 0; i < n; i++) dst[dstOff + i] = Float.float16ToFloat(src.get(I16, off + 2L * i)); }
            case BF16 -> { for (int i = 0; i < n; i++) dst[dstOff + i] = Float.intBitsToFloat(src.get(I16, off + 2L * i) << 16); }
            case Q8_0 -> { for (int b = 0; b < nb; b++) q8_0(src, off + b * bb, dst, dstOff + 32 * b); }
            case Q4_0 -> { for (int b = 0; b < nb; b++) q4_0(src, off + b * bb, dst, dstOff + 32 * b); }
            case Q4_1 -> { for (int b = 0; b < nb; b++) q4_1(src, off + b * bb, dst, dstOff + 32 * b); }
            case Q5_0 -> { for (int b = 0; b < nb; b++) q5_0(src, off + b * bb, dst, dstOff + 32 * b); }
            case Q5_1 -> { for (int b = 0; b < nb; b++) q5_1(src, off + b * bb, dst, dstOff + 32 * b); }
            case Q2_K -> { for (int b = 0; b < nb; b++) q2_k(src, off + b * bb, dst, dstOff + 256 * b); }
            case Q3_K -> { for (int b = 0; b < nb; b++) q3_k(src, off + b * bb, dst, dstOff + 256 * b); }
            case Q4_K -> { for (int b = 0; b < nb; b++) q4_k(src, off + b * bb, dst, dstOff + 256 * b); }
            case Q5_K -> { for (int b = 0; b < nb; b++) q5_k(src, off + b * bb, dst, dstOff + 256 * b); }
            case Q6_K -> { for (int b = 0; b < nb; b++) q6_k(src, off + b * bb, dst, dstOff + 256 * b); }
            // The grid types have one decoder, the codec's (checked against gguf-py bit for bit).
            case IQ4_NL, IQ4_XS, MXFP4, TQ1_0, TQ2_0, IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S -> Codecs.of(type).dequantize(src, off, dst, dstOff, n);
            default -> throw new IllegalArgumentException("dgr cannot decode ggml type " + type);
        }
    }

    static float f16(MemorySegment s, long off) {
        return Float.float16ToFloat(s.get(I16, off));
    }

    private static int u8(MemorySegment s, long off) {
        return s.get(ValueLayout.JAVA_BYTE, off) & 0xFF;
    }

    private static void q8_0(MemorySegment s, long o, float[] y, int yo) {
        float d = f16(s, o);
        for (int j = 0; j < 32; j++) y[yo + j] = s.get(ValueLayout.JAVA_BYTE, o + 2 + j) * d;
    }

    private static void q4_0(MemorySegment s, long o, float[] y, int yo) {
        float d = f16(s, o);
        for (int j = 0; j < 16; j++) {
            int q = u8(s, o + 2 + j);
            y[yo + j] = ((q & 0xF) - 8) * d;
            y[yo + j + 16] = ((q >> 4) - 8) * d;
        }
    }

    private static void q4_1(MemorySegment s, long o, float[] y, int yo) {
        float d = f16(s, o), m = f16(s, o + 2);
        for (int j = 0; j < 16; j++) {
            int q = u8(s, o + 4 + j);
            y[yo + j] = (q & 0xF) * d + m;
            y[yo + j + 16] = (q >> 4) * d + m;
        }
    }

    private static void q5_0(MemorySegment s, long o, float[] y, int yo) {
        float d = f16(s, o);
        int qh = s.get(I32, o + 2);
        for (int j = 0; j < 16; j++) {
            int q = u8(s, o + 6 + j);
            int h0 = ((qh >>> j) << 4) & 0x10;
            int h1 = (qh >>> (j + 12)) & 0x10;
            y[yo + j] = (((q & 0xF) | h0) - 16) * d;
            y[yo + j + 16] = (((q >> 4) | h1) - 16) * d;
        }
    }

    private static void q5_1(MemorySegment s, long o, float[] y, int yo) {
        float d = f16(s, o), m = f16(s, o + 2);
        int qh = s.get(I32, o + 4);
        for (int j = 0; j < 16; j++) {
            int q = u8(s, o + 8 + j);
            int h0 = ((qh >>> j) << 4) & 0x10;
            int h1 = (qh >>> (j + 12)) & 0x10;
            y[yo + j] = ((q & 0xF) | h0) * d + m;
            y[yo + j + 16] = ((q >> 4) | h1) * d + m;
        }
    }

    /** Q2_K: scales[16] @0, qs[64] @16, d @80, dmin @82. */
    private static void q2_k(MemorySegment s, long o, float[] y, int yo) {
        float d = f16(s, o + 80), min = f16(s, o + 82);
        int is = 0;
        for (int n = 0; n < 2; n++) {
            long q = o + 16 + 32L * n;
            for (int shift = 0; shift < 8; shift += 2) {
                for (int half = 0; half < 2; half++) {
                    int sc = u8(s, o + is++);
                    float dl = d * (sc & 0xF), ml = min * (sc >> 4);
                    for (int l = 0; l < 16; l++) y[yo++] = dl * ((u8(s, q + 16 * half + l) >> shift) & 3) - ml;
                }
            }
        }
    }

    /** Q3_K: hmask[32] @0, qs[64] @32, scales[12] @96, d @108. */
    private static void q3_k(MemorySegment s, long o, float[] y, int yo) {
        float dAll = f16(s, o + 108);
        int is = 0, m = 1;
        for (int n = 0; n < 2; n++) {
            long q = o + 32 + 32L * n;
            for (int shift = 0; shift < 8; shift += 2) {
                for (int half = 0; half < 2; half++) {
                    float dl = dAll * (q3Scale(s, o + 96, is++) - 32);
                    for (int l = 0; l < 16; l++) {
                        int idx = 16 * half + l;
                        int lo = (u8(s, q + idx) >> shift) & 3;
                        int hi = (u8(s, o + idx) & m) != 0 ? 0 : 4;
                        y[yo++] = dl * (lo - hi);
                    }
                }
                m <<= 1;
            }
        }
    }

    /** The i-th 6-bit Q3_K scale: low 4 bits from bytes 0..7, high 2 bits from bytes 8..11. */
    static int q3Scale(MemorySegment s, long sc, int i) {
        int low = i < 8 ? u8(s, sc + i) & 0xF : u8(s, sc + i - 8) >> 4;
        int high = (u8(s, sc + 8 + (i & 3)) >> (2 * (i >> 2))) & 3;
        return low | (high << 4);
    }

    /** The little-endian f16 at {@code b[i], b[i+1]} as a float (for repacking file blocks held in arrays). */
    static float f16le(byte[] b, int i) {
        return Float.float16ToFloat((short) ((b[i] & 0xFF) | (b[i + 1] << 8)));
    }

    /**
     * {@link #q3Scale(MemorySegment, long, int)} on a file block held in an array, for the load's packers
     * ({@link Q8RowPackers}, {@link ByteSpanPackers}): read through a heap segment inside their loops, C2 deoptimized
     * them again and again (profiled predicates), and llama-1b Q3_K_M took 5.5–7.2 s to load and answer, not 4.2–4.3.
     */
    static int q3Scale(byte[] b, int sc, int i) {
        int low = i < 8 ? b[sc + i] & 0xF : (b[sc + i - 8] & 0xFF) >> 4;
        int high = ((b[sc + 8 + (i & 3)] & 0xFF) >> (2 * (i >> 2))) & 3;
        return low | (high << 4);
    }

    /** {@link #scaleMinK4(MemorySegment, long, int, int)} on a file block held in an array, as {@link #q3Scale(byte[], int, int)}. */
    static int scaleMinK4(byte[] b, int q, int j, int which) {
        if (j < 4) return b[q + j + 4 * which] & 63;
        return which == 0
                ? (b[q + j + 4] & 0xF) | (((b[q + j - 4] & 0xFF) >> 6) << 4)
                : ((b[q + j + 4] & 0xFF) >> 4) | (((b[q + j] & 0xFF) >> 6) << 4);
    }

    /** ggml's get_scale_min_k4: the 6-bit scale (which=0) or min (which=1) of sub-block j. */
    static int scaleMinK4(MemorySegment s, long q, int j, int which) {
        if (j < 4) return u8(s, q + j + 4L * which) & 63;
        return which == 0
                ? (u8(s, q + j + 4) & 0xF) | ((u8(s, q + j - 4) >> 6) << 4)
                : (u8(s, q + j + 4) >> 4) | ((u8(s, q + j) >> 6) << 4);
    }

    /** Q4_K: d @0, dmin @2, scales[12] @4, qs[128] @16. */
    private static void q4_k(MemorySegment s, long o, float[] y, int yo) {
        float d = f16(s, o), min = f16(s, o + 2);
        for (int j = 0; j < 4; j++) {
            long q = o + 16 + 32L * j;
            float d1 = d * scaleMinK4(s, o + 4, 2 * j, 0), m1 = min * scaleMinK4(s, o + 4, 2 * j, 1);
            float d2 = d * scaleMinK4(s, o + 4, 2 * j + 1, 0), m2 = min * scaleMinK4(s, o + 4, 2 * j + 1, 1);
            for (int l = 0; l < 32; l++) y[yo + 64 * j + l] = d1 * (u8(s, q + l) & 0xF) - m1;
            for (int l = 0; l < 32; l++) y[yo + 64 * j + 32 + l] = d2 * (u8(s, q + l) >> 4) - m2;
        }
    }

    /** Q5_K: d @0, dmin @2, scales[12] @4, qh[32] @16, qs[128] @48. */
    private static void q5_k(MemorySegment s, long o, float[] y, int yo) {
        float d = f16(s, o), min = f16(s, o + 2);
        for (int j = 0; j < 4; j++) {
            long ql = o + 48 + 32L * j;
            int u1 = 1 << (2 * j), u2 = 2 << (2 * j);
            float d1 = d * scaleMinK4(s, o + 4, 2 * j, 0), m1 = min * scaleMinK4(s, o + 4, 2 * j, 1);
            float d2 = d * scaleMinK4(s, o + 4, 2 * j + 1, 0), m2 = min * scaleMinK4(s, o + 4, 2 * j + 1, 1);
            for (int l = 0; l < 32; l++) {
                int h = u8(s, o + 16 + l);
                y[yo + 64 * j + l] = d1 * ((u8(s, ql + l) & 0xF) + ((h & u1) != 0 ? 16 : 0)) - m1;
                y[yo + 64 * j + 32 + l] = d2 * ((u8(s, ql + l) >> 4) + ((h & u2) != 0 ? 16 : 0)) - m2;
            }
        }
    }

    /** Q6_K: ql[128] @0, qh[64] @128, scales[16] (int8) @192, d @208. */
    private static void q6_k(MemorySegment s, long o, float[] y, int yo) {
        float d = f16(s, o + 208);
        for (int n = 0; n < 2; n++) {
            long ql = o + 64L * n, qh = o + 128 + 32L * n, sc = o + 192 + 8L * n;
            int base = yo + 128 * n;
            for (int l = 0; l < 32; l++) {
                int is = l / 16;
                int h = u8(s, qh + l);
                int q1 = ((u8(s, ql + l) & 0xF) | ((h & 3) << 4)) - 32;
                int q2 = ((u8(s, ql + l + 32) & 0xF) | (((h >> 2) & 3) << 4)) - 32;
                int q3 = ((u8(s, ql + l) >> 4) | (((h >> 4) & 3) << 4)) - 32;
                int q4 = ((u8(s, ql + l + 32) >> 4) | (((h >> 6) & 3) << 4)) - 32;
                y[base + l] = d * s.get(ValueLayout.JAVA_BYTE, sc + is) * q1;
                y[base + l + 32] = d * s.get(ValueLayout.JAVA_BYTE, sc + is + 2) * q2;
                y[base + l + 64] = d * s.get(ValueLayout.JAVA_BYTE, sc + is + 4) * q3;
                y[base + l + 96] = d * s.get(ValueLayout.JAVA_BYTE, sc + is + 6) * q4;
            }
        }
    }
}
