package dgr.engine.kernel;

import java.util.Collection;
import java.util.EnumSet;
import java.util.Set;

/**
 * {@code java-q8/1}: {@link SimdKernels} with one change, the Q4_0, Q4_1, Q5_0, Q5_1, Q8_0,
 * IQ4_NL, MXFP4, Q2_K to Q6_K and IQ4_XS matrices (width a multiple of 256, finite scales) multiply activations rounded
 * to 8 bits per 32-value block ({@link Q8Rows}), as llama.cpp does for them; every other weight type,
 * and attention, is {@code java-simd/1}'s.
 *
 * <p>What it trades: logits move by about what llama.cpp's own rounding moves them (the
 * conformance README's tolerance for engines that round activations, 5e-2 × max|logit|, not
 * f32's 1e-3), in exchange for integer dot products that the native kernel ({@link Q8Native})
 * runs at memory speed. Results are still bit-identical across batch sizes, worker splits and
 * machines (native or not): a different engine id, so rows never batch with {@code java-simd/1}'s.
 */
public final class Q8Kernels implements Kernels {
    private final SimdKernels simd = new SimdKernels();

    @Override
    public String name() {
        return "java-q8";
    }

    /** Whether a native 8-bit kernel runs on this machine (else these kernels fall back to a slow Java reference). */
    public static boolean nativeKernel() {
        return Q8Native.KERNEL != null;
    }

    /**
     * For A/B benchmarks in one JVM (same JIT state and neighbours' load for both sides): false
     * runs the VNNI path where AMX would run, true lets AMX run again where it can. Same bits.
     */
    public static void amxForBenchmark(boolean on) {
        Q8Native.amxHeldOff = on ? Set.of() : EnumSet.allOf(WeightLayout.class);
    }

    /**
     * As {@link #amxForBenchmark(boolean)}, for the matrices of the given GGML types only (names as
     * GGUF writes them, e.g. {@code Q6_K}): which types gain from AMX, measured in one JVM.
     *
     * @throws IllegalArgumentException for a name that is no type the 8-bit kernels take
     */
    public static void amxForBenchmark(boolean on, Collection<String> ggmlTypes) {
        EnumSet<WeightLayout> off = EnumSet.noneOf(WeightLayout.class);
        for (String t : ggmlTypes) {
            try {
                off.add(WeightLayout.valueOf(t.toUpperCase(java.util.Locale.ROOT) + "_Q8"));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("no 8-bit kernel layout for type '" + t + "' (" + String.join(", ",
                        EnumSet.allOf(WeightLayout.class).stream().map(Enum::name).filter(n -> n.endsWith("_Q8"))
                                .map(n -> n.substring(0, n.length() - 3)).toList()) + ")");
            }
        }
        Q8Native.amxHeldOff = on ? Set.of() : off;
    }

    /** One line for benchmark reports: whether the native kernel runs. */
    public static String report() {
        return Q8Native.DESCRIPTION;
    }

    @Override
    public WeightMatrix prepare(WeightMatrix w, java.lang.foreign.Arena arena) {
        return Q8Rows.fits(w) ? SimdKernels.releaseFilePages(w, Q8Rows.repack(w, arena)) : simd.prepare(w, arena);
    }

    @Override
    public int rowGroup(WeightMatrix w) {
        return Q8Rows.fits(w) ? Q8Rows.GROUP : simd.rowGroup(w);
    }

    @Override
    public void matmul(WeightMatrix w, float[] x, int nRows, float[] out, int oStart, int oEnd, Scratch s) {
        if (Q8Rows.handles(w.layout())) Q8Rows.matmul(w, x, nRows, out, oStart, oEnd, s);
        else simd.matmul(w, x, nRows, out, oStart, oEnd, s);
    }

    @Override
    public boolean roundsInput(WeightMatrix w) {
        return Q8Rows.handles(w.layout());
    }

    @Override
    public boolean rowLanes() {
        return RowLanes.usable();
    }

    @Override
    public NativeAttention nativeAttention() {
        return NativeAttention.KERNEL;
    }

    @Override
    public void scores8(float[] q, int qo, int heads, int hd, float[] k, int kBase, float[] sc, int so, int scStride) {
        simd.scores8(q, qo, heads, hd, k, kBase, sc, so, scStride);
    }

    @Override
    public void scores(float[] q, int qo, int heads, int hd, float[] k, int kBase, int blockStride, int blocks, float[] sc,
                       int so, int scStride) {
        simd.scores(q, qo, heads, hd, k, kBase, blockStride, blocks, sc, so, scStride);
    }

    @Override
    public void weightedV(float[] w, int wo, int wStride, int heads, int t0, int t1, float[] v, int vBase, int kvd,
                          float[] out, int oo, int hd) {
        simd.weightedV(w, wo, wStride, heads, t0, t1, v, vBase, kvd, out, oo, hd);
    }

    @Override
    public void weightedK(float[] w, int wo, int wStride, int heads, int t0, int t1, float[] k, int kBase, int kvd,
                          int width, float[] out, int oo, int hd, float[] lanes) {
        simd.weightedK(w, wo, wStride, heads, t0, t1, k, kBase, kvd, width, out, oo, hd, lanes);
    }
}
