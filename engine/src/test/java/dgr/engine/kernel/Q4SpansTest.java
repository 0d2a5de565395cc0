package dgr.engine.kernel;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dgr.gguf.GgmlType;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The repacked Q4_0 layout and its kernels, against the file layout and a float64 reference. */
class Q4SpansTest {
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    /** {@code rows × cols} values of {@code type} as random bytes; callers then set realistic scales. */
    static MemorySegment randomBlocks(GgmlType type, int rows, int cols, SplittableRandom rnd) {
        MemorySegment m = Arena.ofAuto().allocate(type.bytesFor(cols) * rows, 64);
        for (long o = 0; o < m.byteSize(); o++) m.set(ValueLayout.JAVA_BYTE, o, (byte) rnd.nextInt());
        return m;
    }

    /** A random Q4_0 matrix in ggml layout with realistic f16 scales (some tiny, one subnormal, one zero). */
    static WeightMatrix randomQ4_0(int rows, int cols, long seed) {
        SplittableRandom rnd = new SplittableRandom(seed);
        MemorySegment m = randomBlocks(GgmlType.Q4_0, rows, cols, rnd);
        ValueLayout.OfShort f16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
        int k = 0;
        for (long o = 0; o < m.byteSize(); o += 18, k++) {
            float d = k == 3 ? 0f : k == 5 ? 3e-7f : (float) (0.001 + 0.02 * rnd.nextDouble()) * (rnd.nextBoolean() ? 1 : -1);
            m.set(f16, o, Float.floatToFloat16(d));
        }
        return new WeightMatrix("w", GgmlType.Q4_0, rows, cols, GgmlType.Q4_0.bytesFor(cols), m);
    }

    /** Writes {@code value} as f16 at byte {@code at} of every {@code block}-byte block of {@code m}. */
    static void setF16(MemorySegment m, int block, int at, java.util.function.DoubleSupplier value) {
        ValueLayout.OfShort f16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
        for (long o = 0; o < m.byteSize(); o += block) m.set(f16, o + at, Float.floatToFloat16((float) value.getAsDouble()));
    }

    /** A random Q4_K matrix in ggml layout with realistic f16 d and dmin. */
    static WeightMatrix randomQ4_K(int rows, int cols, long seed) {
        SplittableRandom rnd = new SplittableRandom(seed);
        MemorySegment m = randomBlocks(GgmlType.Q4_K, rows, cols, rnd);
        setF16(m, 144, 0, () -> 0.0005 + 0.002 * rnd.nextDouble());
        setF16(m, 144, 2, () -> 0.0005 + 0.002 * rnd.nextDouble());
        return new WeightMatrix("k", GgmlType.Q4_K, rows, cols, GgmlType.Q4_K.bytesFor(cols), m);
    }

    @Test
    void repackedQ4_KRowsHoldTheSameValuesAsTheFile() {
        int cols = 512, nb = cols / 32;
        WeightMatrix w = randomQ4_K(3, cols, 11);
        WeightMatrix p = Q4Spans.repack(w, Arena.ofAuto());
        assertThat(p.layout()).isEqualTo(WeightLayout.Q4_K_SPANS);
        float[] want = new float[cols];
        for (int r = 0; r < w.rows(); r++) {
            RowDecoder.decodeRow(w, r, want, 0);
            long off = p.rowOffset(r);
            for (int c = 0; c < cols; c++) {
                int span = c / 64, k = (c % 64) / 8, j = c % 8;
                int v = p.data().get(ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), off + 3L * nb + 32L * span + 4L * j);
                int q = (v >>> (4 * k)) & 15, b = c / 32;
                float d = p.data().get(F32, off + 4L * (b / 8)), dmin = p.data().get(F32, off + nb / 2 + 4L * (b / 8));
                int sc = p.data().get(ValueLayout.JAVA_BYTE, off + nb + b) & 0xFF, mn = p.data().get(ValueLayout.JAVA_BYTE, off + 2L * nb + b) & 0xFF;
                assertThat(sc).isLessThan(64);
                assertThat(mn).isLessThan(64);
                assertThat((d * sc) * q - dmin * mn).as("row %d col %d", r, c).isEqualTo(want[c]);
            }
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 3, 4, 6})
    void q4_KMatchesFloat64ReferenceAndIsBitIdenticalAcrossBatchSizes(int nRows) {
        checkAgainstReference(randomQ4_K(21, 512, 12), nRows);
    }

    @Test
    void repackedRowsHoldTheSameValuesAsTheFile() {
        WeightMatrix w = randomQ4_0(5, 512, 1);
        WeightMatrix p = Q4Spans.repack(w, Arena.ofAuto());
        assertThat(p.layout()).isEqualTo(WeightLayout.Q4_0_SPANS);
        assertThat(p.rowBytes()).isEqualTo(Q4Spans.rowBytes(GgmlType.Q4_0, 512));
        float[] want = new float[512];
        int nb = 512 / 32;
        for (int r = 0; r < w.rows(); r++) {
            RowDecoder.decodeRow(w, r, want, 0);
            long off = p.rowOffset(r);
            for (int c = 0; c < 512; c++) {
                int span = c / 64, k = (c % 64) / 8, j = c % 8;
                int v = p.data().get(ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), off + 2L * nb + 32L * span + 4L * j);
                int q = (v >>> (4 * k)) & 15;
                float d = Float.float16ToFloat(p.data().get(ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), off + 2L * (c / 32)));
                assertThat(Float.floatToRawIntBits(d * (q - 8))).as("row %d col %d", r, c)
                        .isEqualTo(Float.floatToRawIntBits(want[c]));
            }
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3, 4, 5, 7, 8, 9})
    void matchesFloat64ReferenceAndIsBitIdenticalAcrossBatchSizes(int nRows) {
        checkAgainstReference(randomQ4_0(37, 768, 2), nRows);
    }

    /** A random Q4_1 matrix in ggml layout with small f16 scales and mins of either sign. */
    static WeightMatrix randomQ4_1(int rows, int cols, long seed) {
        SplittableRandom rnd = new SplittableRandom(seed);
        MemorySegment m = randomBlocks(GgmlType.Q4_1, rows, cols, rnd);
        setF16(m, 20, 0, () -> 0.0005 + 0.002 * rnd.nextDouble());
        setF16(m, 20, 2, () -> 0.01 * rnd.nextGaussian());
        return new WeightMatrix("q4_1", GgmlType.Q4_1, rows, cols, GgmlType.Q4_1.bytesFor(cols), m);
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3, 4, 5, 8})
    void q4_1MatchesFloat64ReferenceAndIsBitIdenticalAcrossBatchSizes(int nRows) {
        WeightMatrix w = randomQ4_1(21, 512, 4);
        assertThat(new SimdKernels().prepare(w, Arena.ofAuto()).layout()).isEqualTo(WeightLayout.Q4_1_SPANS);
        checkAgainstReference(w, nRows);
    }

    @Test
    void q4_1WithAnInfiniteMinStaysInFileLayout() {
        WeightMatrix w = randomQ4_1(2, 256, 5);
        w.data().set(ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), 20 * 3 + 2, (short) 0x7C00);
        assertThat(new SimdKernels().prepare(w, Arena.ofAuto()).layout()).isEqualTo(WeightLayout.GGML);
    }

    /**
     * Prepares {@code w} and checks every output of a {@code nRows}-row matmul (run in two chunks)
     * against a float64 dot product of the dequantized row, and each batch row bit for bit against
     * the same row run alone. Shared with {@link ByteSpansTest}.
     */
    static void checkAgainstReference(WeightMatrix w, int nRows) {
        SplittableRandom rnd = new SplittableRandom(3);
        checkAgainstReference(w, nRows, i -> rnd.nextGaussian() * (i % 97 == 0 ? 30 : 1));
    }

    /** {@link #checkAgainstReference(WeightMatrix, int)} with activation {@code i} from {@code input}. */
    static void checkAgainstReference(WeightMatrix w, int nRows, java.util.function.IntToDoubleFunction input) {
        assertThat(new SimdKernels().prepare(w, Arena.ofAuto()).layout()).isNotEqualTo(WeightLayout.GGML);
        checkMatmul(w, nRows, input);
    }

    /**
     * The check of {@link #checkAgainstReference(WeightMatrix, int)} for any matrix the SIMD kernels
     * take, repacked or not: float64 bound per output, and each batch row bit for bit alone.
     */
    static void checkMatmul(WeightMatrix w, int nRows, java.util.function.IntToDoubleFunction input) {
        int rows = w.rows(), cols = w.cols();
        WeightMatrix p = new SimdKernels().prepare(w, Arena.ofAuto());
        float[] x = new float[nRows * cols];
        for (int i = 0; i < x.length; i++) x[i] = (float) input.applyAsDouble(i);
        float[] out = new float[nRows * rows];
        Scratch s = new Scratch(cols, 16);
        Kernels k = new SimdKernels();
        k.matmul(p, x, nRows, out, 0, rows / 2, s);
        k.matmul(p, x, nRows, out, rows / 2, rows, s);
        float[] row = new float[cols];
        for (int o = 0; o < rows; o++) {
            RowDecoder.decodeRow(w, o, row, 0);
            for (int b = 0; b < nRows; b++) {
                double ref = 0, mag = 0;
                for (int c = 0; c < cols; c++) {
                    ref += (double) row[c] * x[b * cols + c];
                    mag += Math.abs((double) row[c] * x[b * cols + c]);
                }
                assertThat((double) out[b * rows + o]).as("out %d row %d", o, b).isCloseTo(ref, org.assertj.core.data.Offset.offset(1e-5 * mag + 1e-30));
                // The same batch row computed alone gives the same bits.
                float[] alone = new float[rows];
                Scratch s1 = new Scratch(cols, 16);
                k.matmul(p, java.util.Arrays.copyOfRange(x, b * cols, (b + 1) * cols), 1, alone, o, o + 1, s1);
                assertThat(Float.floatToRawIntBits(out[b * rows + o])).as("out %d row %d alone", o, b)
                        .isEqualTo(Float.floatToRawIntBits(alone[o]));
            }
        }
    }

    /**
     * The kernels scale activations by powers of two down to 2^-12 (the nibbles are converted
     * where they sit, as {@code q·2^e}): activations from 1e-15 to 1e10 in one input still meet
     * the float64 bound, alone and batched.
     */
    @ParameterizedTest
    @ValueSource(ints = {1, 5})
    void activationsOverTwentyFiveDecadesStayExact(int nRows) {
        SplittableRandom rnd = new SplittableRandom(8);
        java.util.function.IntToDoubleFunction wide = i -> rnd.nextGaussian() * Math.pow(10, rnd.nextInt(-15, 11));
        checkAgainstReference(randomQ4_0(9, 512, 5), nRows, wide);
        checkAgainstReference(randomQ4_K(9, 512, 6), nRows, wide);
    }

    @Test
    void newInputUnderTheSameEpochAndArrayIsOnlyReusedWhileTheEpochHolds() {
        int rows = 8, cols = 256;
        WeightMatrix p = new SimdKernels().prepare(randomQ4_0(rows, cols, 4), Arena.ofAuto());
        float[] x = new float[cols];
        java.util.Arrays.fill(x, 1f);
        float[] a = new float[rows], b = new float[rows];
        Scratch s = new Scratch(cols, 16);
        Kernels k = new SimdKernels();
        k.matmul(p, x, 1, a, 0, rows, s);
        java.util.Arrays.fill(x, 2f);
        s.epoch++; // the engine bumps the epoch whenever inputs may have been rewritten
        k.matmul(p, x, 1, b, 0, rows, s);
        for (int o = 0; o < rows; o++) assertThat(b[o]).isCloseTo(2 * a[o], org.assertj.core.data.Offset.offset(1e-4f * Math.abs(a[o]) + 1e-6f));
    }

    @Test
    void onlyWidthsOfWholeEightBlockGroupsAreRepacked() {
        assertThat(Q4Spans.fits(randomQ4_0(1, 256, 9))).isTrue();
        assertThat(Q4Spans.fits(randomQ4_0(1, 2048, 9))).isTrue();
        assertThat(Q4Spans.fits(randomQ4_0(1, 64, 9))).isFalse();
        WeightMatrix narrow = randomQ4_0(4, 320, 5);
        assertThat(new SimdKernels().prepare(narrow, Arena.ofAuto())).isSameAs(narrow);
        assertThatThrownBy(() -> Q4Spans.repack(narrow, Arena.ofAuto())).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'w'");
    }

    /**
     * The span kernels convert Q4_0's f16 scales with bit operations exact for finite values only,
     * so a matrix with an infinite or NaN scale stays in file layout and its results keep the
     * infinity (as ggml's would); subnormal scales are repacked and exact (the float64 checks).
     */
    @Test
    void aQ4_0MatrixWithANonFiniteScaleStaysInFileLayout() {
        ValueLayout.OfShort f16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
        WeightMatrix inf = randomQ4_0(4, 256, 13);
        inf.data().set(f16, 18L * 9, (short) 0x7C00); // row 1, block 1: +Inf
        assertThat(Q4Spans.finiteScales(inf)).isFalse();
        WeightMatrix kept = new SimdKernels().prepare(inf, Arena.ofAuto());
        assertThat(kept).isSameAs(inf);
        float[] x = new float[256];
        java.util.Arrays.fill(x, 1f);
        float[] out = new float[4];
        new SimdKernels().matmul(kept, x, 1, out, 0, 4, new Scratch(256, 4));
        assertThat(Float.isFinite(out[1])).isFalse();
        assertThat(Float.isFinite(out[0])).isTrue();

        WeightMatrix sub = randomQ4_0(4, 256, 14);
        sub.data().set(f16, 18L * 3, (short) 0x0001); // the smallest subnormal f16
        assertThat(Q4Spans.finiteScales(sub)).isTrue();
        checkAgainstReference(sub, 3);
    }
}
