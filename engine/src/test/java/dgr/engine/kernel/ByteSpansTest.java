package dgr.engine.kernel;

import static org.assertj.core.api.Assertions.assertThat;

import dgr.gguf.GgmlType;
import dgr.gguf.codec.Codecs;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The repacked byte layouts (Q6_K, Q5_K, Q3_K, Q2_K, Q5_0, Q5_1, IQ4_XS, IQ4_NL, MXFP4) and their kernels, against the file layout and a float64 reference. */
class ByteSpansTest {
    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;
    private static final ValueLayout.OfShort F16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(LE);
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(LE);

    /** Random blocks with small positive f16 scales (d, and dmin where the type has one), so sums stay ordinary numbers. */
    static WeightMatrix random(GgmlType type, int rows, int cols, long seed) {
        SplittableRandom rnd = new SplittableRandom(seed);
        MemorySegment m = Q4SpansTest.randomBlocks(type, rows, cols, rnd);
        // Where each type's f16 d (and dmin or m) sit in its file block.
        if (type == GgmlType.TQ1_0 || type == GgmlType.TQ2_0) {
            // Random trit bytes with a small positive f16 d per block (TQ2_0's 2-bit value 3 decodes as 2·d, as in ggml).
            int block = (int) type.bytesFor(256), at = type == GgmlType.TQ1_0 ? 52 : 64;
            Q4SpansTest.setF16(m, block, at, () -> 0.0001 + 0.001 * rnd.nextDouble());
            return new WeightMatrix(type.name().toLowerCase(), type, rows, cols, type.bytesFor(cols), m);
        }
        if (Codecs.integerBlock(type) != null) {
            // The IQ types: blocks their codec wrote for Gaussian rows (random bytes would do too,
            // but IQ1_M keeps its f16 d in four scattered nibbles), at a small scale.
            float[] x = new float[rows * cols];
            for (int i = 0; i < x.length; i++) x[i] = (float) (0.002 * rnd.nextGaussian());
            MemorySegment b = Arena.ofAuto().allocate(type.bytesFor(x.length), 16);
            Codecs.of(type).quantize(x, 0, x.length, b, 0);
            return new WeightMatrix(type.name().toLowerCase(), type, rows, cols, type.bytesFor(cols), b);
        }
        if (type == GgmlType.MXFP4) {
            // Exponents 120..130: scales 2^-8 .. 2^2, all normal (e >= 2), so the matrix is repacked.
            for (long o = 0; o < m.byteSize(); o += 17) m.set(ValueLayout.JAVA_BYTE, o, (byte) (120 + rnd.nextInt(11)));
            return new WeightMatrix(type.name().toLowerCase(), type, rows, cols, type.bytesFor(cols), m);
        }
        int block = switch (type) {
            case Q5_0 -> 22;
            case Q5_1 -> 24;
            case IQ4_NL -> 18;
            default -> (int) type.bytesFor(256);
        };
        int[] at = switch (type) {
            case Q6_K -> new int[] {208};
            case Q3_K -> new int[] {108};
            case Q2_K -> new int[] {80, 82};
            case Q5_0, IQ4_NL, IQ4_XS -> new int[] {0};
            default -> new int[] {0, 2}; // Q5_K, Q5_1
        };
        for (int a : at) Q4SpansTest.setF16(m, block, a, () -> 0.0001 + 0.001 * rnd.nextDouble());
        return new WeightMatrix(type.name().toLowerCase(), type, rows, cols, type.bytesFor(cols), m);
    }

    @ParameterizedTest
    @CsvSource({"Q6_K, Q6_K_SPANS", "Q5_K, Q5_K_SPANS", "Q3_K, Q3_K_SPANS", "Q2_K, Q2_K_SPANS", "Q5_0, Q5_0_SPANS",
                "Q5_1, Q5_1_SPANS", "IQ4_XS, IQ4_XS_SPANS", "IQ4_NL, IQ4_NL_SPANS", "MXFP4, MXFP4_SPANS", "TQ1_0, TQ1_0_SPANS", "TQ2_0, TQ2_0_SPANS",
                "IQ1_S, IQ1_S_SPANS", "IQ1_M, IQ1_M_SPANS", "IQ2_XXS, IQ2_XXS_SPANS", "IQ2_XS, IQ2_XS_SPANS", "IQ2_S, IQ2_S_SPANS",
                "IQ3_XXS, IQ3_XXS_SPANS", "IQ3_S, IQ3_S_SPANS"})
    void repackedRowsHoldTheSameValuesAsTheFile(GgmlType type, WeightLayout layout) {
        int cols = 512, ns = cols / 16;
        WeightMatrix w = random(type, 3, cols, 1);
        WeightMatrix p = ByteSpans.repack(w, Arena.ofAuto());
        assertThat(p.layout()).isEqualTo(layout);
        assertThat(p.rowBytes()).isEqualTo(ByteSpans.rowBytes(type, cols));
        MemorySegment d = p.data();
        long quants = p.rowBytes() - cols;
        float[] want = new float[cols];
        for (int r = 0; r < w.rows(); r++) {
            RowDecoder.decodeRow(w, r, want, 0);
            long off = p.rowOffset(r);
            for (int c = 0; c < cols; c++) {
                int span = c / 32, k = (c % 32) / 8, j = c % 8, g = c / 16, sb = c / 256;
                int q = d.get(ValueLayout.JAVA_BYTE, off + quants + 32L * span + 4L * j + k) & 0xFF;
                float value;
                if (type == GgmlType.TQ1_0 || type == GgmlType.TQ2_0) {
                    assertThat(q).isLessThan(4);
                    value = d.get(F32, off + 4L * sb) * d.get(ValueLayout.JAVA_BYTE, off + cols / 64 + g) * (q - 1);
                } else if (Codecs.integerBlock(type) != null) {
                    assertThat(q).isBetween(128 - 62, 128 + 62);
                    value = d.get(F32, off + 4L * sb) * d.get(ValueLayout.JAVA_BYTE, off + cols / 64 + g) * (q - 128);
                } else if (type == GgmlType.MXFP4) {
                    assertThat(q).isBetween(116, 140);
                    int e = d.get(ValueLayout.JAVA_BYTE, off + c / 32) & 0xFF;
                    value = (q - 128) * Math.scalb(1f, e - 128);
                } else if (type == GgmlType.IQ4_NL) {
                    assertThat(q).isBetween(1, 241);
                    value = (q - 128) * Float.float16ToFloat(d.get(F16, off + 2L * (c / 32)));
                } else if (type == GgmlType.IQ4_XS) {
                    assertThat(q).isBetween(1, 241);
                    value = d.get(F32, off + 4L * sb) * d.get(ValueLayout.JAVA_BYTE, off + cols / 64 + g) * (q - 128);
                } else if (type == GgmlType.Q5_0 || type == GgmlType.Q5_1) {
                    assertThat(q).isLessThan(32);
                    float s = Float.float16ToFloat(d.get(F16, off + 2L * (c / 32)));
                    value = type == GgmlType.Q5_0 ? (q - 16) * s : q * s + Float.float16ToFloat(d.get(F16, off + 2L * (cols / 32 + c / 32)));
                } else if (type == GgmlType.Q6_K || type == GgmlType.Q3_K) {
                    int off8 = type == GgmlType.Q6_K ? 32 : 4;
                    assertThat(q).isLessThan(2 * off8);
                    float s = d.get(F32, off + 4L * sb) * d.get(ValueLayout.JAVA_BYTE, off + cols / 64 + g);
                    value = s * (q - off8);
                } else {
                    assertThat(q).isLessThan(type == GgmlType.Q5_K ? 32 : 4);
                    long scales = off + 8L * (cols / 256);
                    float s = d.get(F32, off + 4L * sb) * (d.get(ValueLayout.JAVA_BYTE, scales + g) & 0xFF);
                    float o = d.get(F32, off + 4L * (cols / 256 + sb)) * (d.get(ValueLayout.JAVA_BYTE, scales + ns + g) & 0xFF);
                    value = s * q - o;
                }
                assertThat(Float.floatToRawIntBits(value)).as("row %d col %d", r, c).isEqualTo(Float.floatToRawIntBits(want[c]));
            }
        }
    }

    @ParameterizedTest
    @CsvSource({"Q6_K, 1", "Q6_K, 2", "Q6_K, 3", "Q6_K, 4", "Q6_K, 5", "Q6_K, 8",
                "Q5_K, 1", "Q5_K, 2", "Q5_K, 3", "Q5_K, 4", "Q5_K, 5", "Q5_K, 8",
                "Q3_K, 1", "Q3_K, 3", "Q3_K, 5", "Q2_K, 1", "Q2_K, 3", "Q2_K, 5", "Q5_0, 1", "Q5_0, 3", "Q5_0, 5",
                "Q5_1, 1", "Q5_1, 3", "Q5_1, 5", "IQ4_XS, 1", "IQ4_XS, 2", "IQ4_XS, 3", "IQ4_XS, 4", "IQ4_XS, 5", "IQ4_XS, 8",
                "IQ4_NL, 1", "IQ4_NL, 3", "IQ4_NL, 5", "MXFP4, 1", "MXFP4, 2", "MXFP4, 3", "MXFP4, 4", "MXFP4, 5", "MXFP4, 8", "TQ1_0, 1", "TQ1_0, 4", "TQ1_0, 5", "TQ2_0, 1", "TQ2_0, 4", "TQ2_0, 5",
                "IQ1_S, 1", "IQ1_S, 4", "IQ1_M, 1", "IQ1_M, 5", "IQ2_XXS, 1", "IQ2_XXS, 4", "IQ2_XS, 1", "IQ2_XS, 5",
                "IQ2_S, 1", "IQ2_S, 3", "IQ3_XXS, 1", "IQ3_XXS, 4", "IQ3_S, 1", "IQ3_S, 5"})
    void matchesFloat64ReferenceAndIsBitIdenticalAcrossBatchSizes(GgmlType type, int nRows) {
        WeightMatrix w = random(type, 19, 768, 2);
        assertThat(new SimdKernels().prepare(w, Arena.ofAuto()).layout())
                .isEqualTo(WeightLayout.valueOf(type.name() + "_SPANS"));
        Q4SpansTest.checkAgainstReference(w, nRows);
    }

    @org.junit.jupiter.api.Test
    void mxfp4WithASubnormalScaleStaysInFileLayout() {
        WeightMatrix w = random(GgmlType.MXFP4, 2, 256, 4);
        w.data().set(ValueLayout.JAVA_BYTE, 17L * 3, (byte) 1); // e = 1: half scale 2^-127, subnormal
        assertThat(ByteSpans.fits(w)).isFalse();
        assertThat(new SimdKernels().prepare(w, Arena.ofAuto())).isSameAs(w);
        w.data().set(ValueLayout.JAVA_BYTE, 17L * 3, (byte) 2);
        assertThat(ByteSpans.fits(w)).isTrue();
    }
}
