package dgr.engine.kernel;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dgr.gguf.GgmlType;
import java.lang.foreign.Arena;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@link Q8Rows}: the layouts against the file, the Java kernel against float64, each native
 * kernel this CPU can run against the Java one to the bit.
 */
class Q8RowsTest {

    /** Activations of varied magnitude per block: a zero block, a tiny one, a large one, the rest Gaussian. */
    static float[] activations(int rows, int cols, long seed) {
        SplittableRandom rnd = new SplittableRandom(seed);
        float[] x = new float[rows * cols];
        for (int i = 0; i < x.length; i++) {
            int block = i / 32;
            x[i] = block % 7 == 3 ? 0f : block % 11 == 5 ? (float) (1e-33 * rnd.nextGaussian())
                    : block % 13 == 6 ? (float) (300 * rnd.nextGaussian()) : (float) rnd.nextGaussian();
        }
        return x;
    }

    static WeightMatrix random(GgmlType type, int rows, int cols, long seed) {
        return switch (type) {
            case Q8_0 -> SimdQ8_0Test.randomQ8_0(rows, cols, seed);
            case Q4_0 -> Q4SpansTest.randomQ4_0(rows, cols, seed);
            case Q4_K -> Q4SpansTest.randomQ4_K(rows, cols, seed);
            case Q4_1 -> Q4SpansTest.randomQ4_1(rows, cols, seed);
            default -> ByteSpansTest.random(type, rows, cols, seed);
        };
    }

    static final GgmlType[] TYPES = {GgmlType.Q4_0, GgmlType.Q4_1, GgmlType.Q5_0, GgmlType.Q5_1, GgmlType.Q8_0, GgmlType.IQ4_NL,
            GgmlType.MXFP4, GgmlType.Q2_K, GgmlType.Q3_K, GgmlType.Q4_K, GgmlType.Q5_K, GgmlType.Q6_K, GgmlType.IQ4_XS};

    /** The value the layout holds for value {@code i} of row {@code r}, computed as ggml's dequantization does. */
    static float held(WeightMatrix p, int r, int i) {
        return switch (p.type()) {
            case Q4_K, Q5_K -> {
                int sb = i / 256, j = (i % 256) / 32;
                float d1 = Q8Rows.KQuants.d(p, r, sb) * Q8Rows.KQuants.scale(p, r, sb, j);
                float m1 = Q8Rows.KQuants.dmin(p, r, sb) * Q8Rows.KQuants.min(p, r, sb, j);
                yield d1 * Q8Rows.KQuants.quant(p, r, sb, i % 256) - m1;
            }
            case Q2_K -> {
                int sb = i / 256, k = (i % 256) / 16;
                float d1 = Q8Rows.KQuants.d(p, r, sb) * Q8Rows.KQuants.scale(p, r, sb, k);
                float m1 = Q8Rows.KQuants.dmin(p, r, sb) * Q8Rows.KQuants.min(p, r, sb, k);
                yield d1 * Q8Rows.KQuants.quant(p, r, sb, i % 256) - m1;
            }
            case Q3_K -> {
                int sb = i / 256;
                yield Q8Rows.KQuants.d(p, r, sb) * Q8Rows.KQuants.scale(p, r, sb, (i % 256) / 16) * (Q8Rows.KQuants.quant(p, r, sb, i % 256) - 4);
            }
            case IQ4_XS -> {
                int sb = i / 256;
                yield Q8Rows.KQuants.d(p, r, sb) * Q8Rows.KQuants.scale(p, r, sb, (i % 256) / 32) * Q8Rows.KQuants.quant(p, r, sb, i % 256);
            }
            case Q6_K -> {
                int sb = i / 256;
                yield Q8Rows.KQuants.d(p, r, sb) * Q8Rows.KQuants.scale(p, r, sb, (i % 256) / 16) * (Q8Rows.KQuants.quant(p, r, sb, i % 256) - 32);
            }
            case Q4_1, Q5_1 -> Q8Rows.scale(p, r, i / 32) * Q8Rows.weight(p, r, i / 32, i % 32) + Q8Rows.min(p, r, i / 32);
            default -> Q8Rows.scale(p, r, i / 32) * Q8Rows.weight(p, r, i / 32, i % 32);
        };
    }

    /** The native kernels this CPU can run (loaded afresh, whichever the engine picked). */
    static List<Q8Native> natives() {
        List<Q8Native> out = new ArrayList<>();
        try {
            if (CodePage.unavailable() != null) return out;
            var flags = CodePage.cpuFlags();
            for (Q8Native.Variant v : Q8Native.Variant.values()) {
                if (flags.containsAll(v.flags)) out.add(Q8Native.load(v));
            }
        } catch (Throwable t) {
            throw new AssertionError("loading a native kernel failed", t);
        }
        return out;
    }

    static Stream<Arguments> typesAndKernels() {
        List<Arguments> out = new ArrayList<>();
        for (GgmlType t : TYPES) {
            out.add(Arguments.of(t, "java"));
            for (Q8Native n : natives()) out.add(Arguments.of(t, n.variant.name()));
        }
        return out.stream();
    }

    @ParameterizedTest
    @EnumSource(names = {"Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "IQ4_NL", "MXFP4", "Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K", "IQ4_XS"})
    void repackedRowsHoldTheFileValues(GgmlType type) {
        int cols = 768, rows = 21;
        WeightMatrix w = random(type, rows, cols, 3);
        WeightMatrix p = Q8Rows.repack(w, Arena.ofAuto());
        assertThat(p.layout().name()).isEqualTo(type.name() + "_Q8");
        assertThat(p.rowBytes()).isEqualTo(switch (type) {
            case Q4_K -> 148 * 3L;
            case Q5_K -> 180 * 3L;
            case IQ4_XS -> 138 * 3L;
            case Q3_K -> 114 * 3L;
            default -> w.rowBytes();
        });
        float[] file = new float[cols];
        for (int r = 0; r < rows; r++) {
            RowDecoder.decodeRow(w, r, file, 0);
            for (int i = 0; i < cols; i++) assertThat(held(p, r, i)).as("row %d value %d", r, i).isEqualTo(file[i]);
        }
    }

    @ParameterizedTest
    @EnumSource(names = {"Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "IQ4_NL", "MXFP4", "Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K", "IQ4_XS"})
    void javaKernelIsTheRoundedActivationsDotTheWeightsInFloat64(GgmlType type) {
        int rows = 9, cols = 512, nb = cols / 32, batch = 3;
        WeightMatrix w = random(type, rows, cols, 5);
        WeightMatrix p = Q8Rows.repack(w, Arena.ofAuto());
        float[] x = activations(batch, cols, 6), out = new float[batch * rows], file = new float[cols];
        Q8Input in = new Q8Input().prepare(x, batch, cols, Q8Rows.span(p.layout()), 1);
        Q8Rows.javaRows(p, in, batch, out, 0, rows);
        for (int b = 0; b < batch; b++) {
            for (int r = 0; r < rows; r++) {
                RowDecoder.decodeRow(w, r, file, 0);
                double want = 0, mag = 0;
                for (int i = 0; i < cols; i++) {
                    double a = (double) in.d[b * nb + i / 32] * in.q[b * cols + i];
                    // The rounding is to within half a step of the block's scale.
                    assertThat(Math.abs(a - x[b * cols + i])).isLessThanOrEqualTo(0.5000001 * in.d[b * nb + i / 32] + 1e-30);
                    want += file[i] * a;
                    mag += Math.abs(file[i] * a);
                }
                assertThat((double) out[b * rows + r]).as("%s batch %d row %d", type, b, r)
                        .isCloseTo(want, org.assertj.core.data.Offset.offset(1e-5 * mag + 1e-30));
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("roundings")
    void roundingKeepsNaNAndZeroesTinyBlocks(String name, Q8Native kernel) {
        float[] x = new float[96];
        x[5] = Float.NaN;
        x[40] = 1e-31f;
        x[70] = -2.54f;
        x[71] = 1.0f;
        Q8Input in = new Q8Input().prepare(kernel, x, 1, 96, Q8Input.NARROW, 1);
        assertThat(in.d[0]).isNaN();
        assertThat(in.d[1]).isZero();
        assertThat(in.q[40]).isZero();
        assertThat(in.d[2]).isEqualTo(2.54f / 127f);
        assertThat(in.q[70]).isEqualTo((byte) -127);
        assertThat(in.q[71]).isEqualTo((byte) 50);
        assertThat(in.sum[2]).isEqualTo(-127 + 50);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("roundings")
    void wideRoundingGivesEightBlocksOneScale(String name, Q8Native kernel) {
        float[] x = new float[768];
        x[5] = Float.NaN;
        java.util.Arrays.fill(x, 256, 512, 1e-31f);
        x[600] = -2.54f;
        x[601] = 1.0f;
        x[700] = 0.5f;
        Q8Input in = new Q8Input().prepare(kernel, x, 1, 768, Q8Input.WIDE, 1);
        for (int b = 0; b < 8; b++) assertThat(in.d[b]).as("block %d", b).isNaN();
        for (int b = 8; b < 16; b++) assertThat(in.d[b]).as("block %d", b).isZero();
        for (int b = 16; b < 24; b++) assertThat(in.d[b]).as("block %d", b).isEqualTo(2.54f / 127f);
        assertThat(in.q[600]).isEqualTo((byte) -127);
        assertThat(in.q[601]).isEqualTo((byte) 50);
        assertThat(in.q[700]).isEqualTo((byte) 25);
        assertThat(in.sum[18]).isEqualTo(-127 + 50);
        assertThat(in.sum[21]).isEqualTo(25);
        assertThatThrownBy(() -> new Q8Input().prepare(kernel, x, 1, 96, Q8Input.WIDE, 2)).hasMessageContaining("cannot be rounded per 256 values");
    }

    /** The roundings to test: the Vector API's and each native image's this CPU runs. */
    static Stream<Arguments> roundings() {
        List<Arguments> out = new ArrayList<>();
        out.add(Arguments.of("java", null));
        for (Q8Native n : natives()) out.add(Arguments.of(n.variant.name(), n));
        return out.stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("roundings")
    void roundingEqualsTheScalarReference(String name, Q8Native kernel) {
        for (int span : new int[] {Q8Input.NARROW, Q8Input.WIDE}) roundingEqualsTheScalarReference(kernel, span);
    }

    private static void roundingEqualsTheScalarReference(Q8Native kernel, int span) {
        SplittableRandom rnd = new SplittableRandom(21);
        int cols = 4096;
        float[] x = activations(3, cols, 22);
        // Values on and beside rounding halves, extremes, infinities and a NaN.
        for (int i = 0; i < 600; i++) x[rnd.nextInt(x.length)] = (float) (rnd.nextInt(255) - 127) / 2 * (1 + (float) rnd.nextGaussian() * 1e-7f);
        x[100] = Float.POSITIVE_INFINITY;
        x[1000] = Float.NEGATIVE_INFINITY;
        x[2000] = Float.NaN;
        x[3000] = Float.MAX_VALUE;
        x[4000] = -Float.MIN_VALUE;
        // Whole blocks: all tiny (zeros), one infinity among finite values, all zero, and the largest finite.
        java.util.Arrays.fill(x, 4096, 4128, 3e-31f);
        java.util.Arrays.fill(x, 4128, 4160, 1.5f);
        x[4140] = Float.POSITIVE_INFINITY;
        java.util.Arrays.fill(x, 4160, 4192, 0f);
        java.util.Arrays.fill(x, 4192, 4224, -Float.MAX_VALUE);
        Q8Input v = new Q8Input().prepare(kernel, x, 3, cols, span, 1), r = new Q8Input().reference(x, 3, cols, span);
        for (int b = 0; b < 3 * cols / 32; b++) {
            assertThat(Float.floatToRawIntBits(v.d[b])).as("span %d block %d scale", span, b).isEqualTo(Float.floatToRawIntBits(r.d[b]));
            if (span == Q8Input.WIDE) assertThat(Float.floatToRawIntBits(v.d[b])).isEqualTo(Float.floatToRawIntBits(v.d[b & ~7]));
            assertThat(v.sum[b]).as("block %d sum", b).isEqualTo(r.sum[b]);
            int t = (b % (cols / 32)) * 3 + b / (cols / 32);
            assertThat(Float.floatToRawIntBits(v.dT[t])).as("block %d, block-major", b).isEqualTo(Float.floatToRawIntBits(v.d[b]));
            assertThat(v.half[2 * b + 1]).isEqualTo(r.half[2 * b + 1]);
            assertThat(Float.floatToRawIntBits(v.dsumT[t])).as("block %d d·sum", b).isEqualTo(Float.floatToRawIntBits(v.d[b] * (float) v.sum[b]));
            assertThat(Float.floatToRawIntBits(r.dsumT[t])).isEqualTo(Float.floatToRawIntBits(v.dsumT[t]));
            assertThat(v.half[2 * b]).isEqualTo(r.half[2 * b]);
            for (int i = 0; i < 32; i++) assertThat(v.q[32 * b + i]).as("block %d value %d", b, i).isEqualTo(r.q[32 * b + i]);
        }
    }

    /**
     * Results per batch row alone, in a batch, and over split output ranges are the same bits;
     * batches of 16, 17, 33 and 48 rows take AMX's 16-row tiles where the CPU has them (48: three
     * tile rows of batch rows over each unpacked weight chunk, nothing left for VNNI).
     */
    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("typesAndKernels")
    void batchAndSplitNeverChangeABit(GgmlType type, String kernel) {
        int rows = 37, cols = 768, maxB = 48;
        WeightMatrix p = Q8Rows.repack(random(type, rows, cols, 8), Arena.ofShared());
        float[] x = activations(maxB, cols, 9);
        float[] solo = new float[maxB * rows];
        for (int b = 0; b < maxB; b++) {
            float[] one = java.util.Arrays.copyOfRange(x, b * cols, (b + 1) * cols), o = new float[rows];
            run(p, one, 1, o, 0, rows, kernel);
            System.arraycopy(o, 0, solo, b * rows, rows);
        }
        for (int batch : new int[] {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 16, 17, 33, 48}) {
            float[] o = new float[batch * rows];
            // Ranges that start and end inside row groups, as a worker's share may.
            run(p, x, batch, o, 0, 10, kernel);
            run(p, x, batch, o, 10, 33, kernel);
            run(p, x, batch, o, 33, rows, kernel);
            for (int b = 0; b < batch; b++) {
                for (int r = 0; r < rows; r++) {
                    assertThat(Float.floatToRawIntBits(o[b * rows + r])).as("batch row %d, row %d, of %d", b, r, batch)
                            .isEqualTo(Float.floatToRawIntBits(solo[b * rows + r]));
                }
            }
        }
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("typesAndKernels")
    void everyKernelEqualsTheJavaKernelToTheBit(GgmlType type, String kernel) {
        for (int cols : new int[] {256, 2048, 8192}) {
            int rows = 19, batch = 21; // 16 (AMX where the CPU has it), then 4 and 1
            WeightMatrix p = Q8Rows.repack(random(type, rows, cols, cols), Arena.ofShared());
            float[] x = activations(batch, cols, cols + 1), a = new float[batch * rows], b = new float[batch * rows];
            run(p, x, batch, a, 0, rows, "java");
            run(p, x, batch, b, 0, rows, kernel);
            for (int i = 0; i < a.length; i++) {
                assertThat(Float.floatToRawIntBits(b[i])).as("%s %d columns, output %d: %s vs %s", kernel, cols, i, b[i], a[i])
                        .isEqualTo(Float.floatToRawIntBits(a[i]));
            }
        }
    }

    @Test
    void thisX86CpuWithAvx2GetsANativeKernel() {
        assumeTrue(CodePage.unavailable() == null, CodePage.unavailable());
        try {
            assumeTrue(CodePage.cpuFlags().containsAll(Q8Native.Variant.AVX2.flags), "no AVX2 here");
        } catch (java.io.IOException e) {
            throw new AssertionError(e);
        }
        assertThat(Q8Native.KERNEL).as(Q8Native.DESCRIPTION).isNotNull();
    }

    @Test
    void anAmxBenchmarkHoldsOffTheNamedTypesOnlyAndRefusesAnUnknownName() {
        try {
            Q8Kernels.amxForBenchmark(false, List.of("Q6_K", "q4_k"));
            assertThat(Q8Native.amxHeldOff).containsExactlyInAnyOrder(WeightLayout.Q6_K_Q8, WeightLayout.Q4_K_Q8);
            Q8Kernels.amxForBenchmark(false);
            assertThat(Q8Native.amxHeldOff).contains(WeightLayout.Q4_0_Q8, WeightLayout.Q8_0_Q8, WeightLayout.MXFP4_Q8);
            assertThatThrownBy(() -> Q8Kernels.amxForBenchmark(false, List.of("Q6_X")))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'Q6_X'");
        } finally {
            Q8Kernels.amxForBenchmark(true);
        }
        assertThat(Q8Native.amxHeldOff).isEmpty();
    }

    @Test
    void slicesStartAtARowGroupAndComputeWhatTheWholeDoes() {
        int rows = 40, cols = 512;
        WeightMatrix p = Q8Rows.repack(Q4SpansTest.randomQ4_0(rows, cols, 12), Arena.ofShared());
        float[] x = activations(2, cols, 13), whole = new float[2 * rows], part = new float[2 * 20];
        Scratch s = new Scratch(8, 8);
        Q8Rows.matmul(p, x, 2, whole, 0, rows, s);
        WeightMatrix slice = p.rowSlice("s", 16, 20);
        s.epoch++;
        Q8Rows.matmul(slice, x, 2, part, 0, 20, s);
        for (int b = 0; b < 2; b++) {
            for (int r = 0; r < 20; r++) assertThat(part[b * 20 + r]).isEqualTo(whole[b * rows + 16 + r]);
        }
        assertThatThrownBy(() -> p.rowSlice("t", 8, 8)).hasMessageContaining("keeps rows in groups of 16; cannot take rows from row 8");
        assertThat(new Q8Kernels().rowGroup(Q4SpansTest.randomQ4_0(4, 512, 1))).isEqualTo(16);
        assertThat(new Q8Kernels().rowGroup(SimdQ8_0Test.randomQ8_0(4, 512, 1))).isEqualTo(16);
        assertThat(new Q8Kernels().rowGroup(Q4SpansTest.randomQ4_K(4, 512, 1))).isEqualTo(16);
        assertThat(new Q8Kernels().rowGroup(ByteSpansTest.random(GgmlType.Q5_K, 4, 512, 1))).isEqualTo(16);
        assertThat(new Q8Kernels().rowGroup(ByteSpansTest.random(GgmlType.Q3_K, 4, 512, 1))).isEqualTo(16);
        assertThat(new Q8Kernels().rowGroup(ByteSpansTest.random(GgmlType.Q5_0, 4, 512, 1))).isEqualTo(16);
        assertThat(new Q8Kernels().rowGroup(ByteSpansTest.random(GgmlType.TQ2_0, 4, 512, 1))).isEqualTo(1);
    }

    @Test
    void q8KernelsRepackOnlyWhatFitsAndRefuseTheRest() {
        Q8Kernels k = new Q8Kernels();
        assertThat(k.name()).isEqualTo("java-q8");
        assertThat(k.prepare(Q4SpansTest.randomQ4_0(4, 512, 1), Arena.ofAuto()).layout()).isEqualTo(WeightLayout.Q4_0_Q8);
        assertThat(k.prepare(SimdQ8_0Test.randomQ8_0(4, 512, 1), Arena.ofAuto()).layout()).isEqualTo(WeightLayout.Q8_0_Q8);
        // 96 columns: not a multiple of 256, so java-simd's kernels take it.
        assertThat(k.prepare(Q4SpansTest.randomQ4_0(4, 96, 1), Arena.ofAuto()).layout()).isEqualTo(WeightLayout.GGML);
        assertThat(k.prepare(Q4SpansTest.randomQ4_K(4, 512, 1), Arena.ofAuto()).layout()).isEqualTo(WeightLayout.Q4_K_Q8);
        assertThat(k.prepare(ByteSpansTest.random(GgmlType.Q6_K, 4, 512, 1), Arena.ofAuto()).layout()).isEqualTo(WeightLayout.Q6_K_Q8);
        // Types without an 8-bit kernel keep java-simd's layouts.
        assertThat(k.prepare(ByteSpansTest.random(GgmlType.Q5_K, 4, 512, 1), Arena.ofAuto()).layout()).isEqualTo(WeightLayout.Q5_K_Q8);
        assertThat(k.prepare(ByteSpansTest.random(GgmlType.TQ2_0, 4, 512, 1), Arena.ofAuto()).layout()).isEqualTo(WeightLayout.TQ2_0_SPANS);
        assertThatThrownBy(() -> Q8Rows.repack(ByteSpansTest.random(GgmlType.TQ2_0, 4, 512, 1), Arena.ofAuto()))
                .hasMessageContaining("cannot be repacked for 8-bit activations");
    }

    private static void run(WeightMatrix p, float[] x, int batch, float[] out, int o0, int o1, String kernel) {
        Q8Input in = new Q8Input().prepare(x, batch, p.cols(), Q8Rows.span(p.layout()), 1);
        if (kernel.equals("java")) {
            Q8Rows.javaRows(p, in, batch, out, o0, o1);
            return;
        }
        Q8Native n = natives().stream().filter(k -> k.variant.name().equals(kernel)).findFirst().orElseThrow();
        n.rows(p, in, batch, out, o0, o1, new Scratch(8, 8));
    }
}
