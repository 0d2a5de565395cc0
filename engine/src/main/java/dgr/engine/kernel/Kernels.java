package dgr.engine.kernel;

/**
 * The arithmetic an engine runs on. Every method computes each output element with one fixed
 * sequence of float operations that depends only on that element's inputs, never on how many rows
 * are batched or which worker runs it (DESIGN.md contract 1).
 */
public interface Kernels {
    /** {@code java-scalar/1} or {@code java-simd/1}. */
    String name();

    /**
     * {@code out[b * w.rows() + o] = dot(row o of w, x[b * w.cols() ..])} for every batch row
     * {@code b < nRows} and output row {@code o} in {@code [oStart, oEnd)}.
     */
    void matmul(WeightMatrix w, float[] x, int nRows, float[] out, int oStart, int oEnd, Scratch s);

    /**
     * Attention scores of {@code heads} query heads against one block of 8 positions of a K page
     * laid out position-minor ({@code KvSlot}): {@code sc[so + g·scStride + j] = Σ_d q[qo + g·hd + d] ·
     * k[kBase + 8d + j]} for {@code g < heads}, {@code j < 8}, the sum taken over {@code d} in order
     * from 0 ({@code hd} a multiple of 8).
     */
    void scores8(float[] q, int qo, int heads, int hd, float[] k, int kBase, float[] sc, int so, int scStride);

    /**
     * {@link #scores8} for {@code blocks} consecutive blocks of 8 positions, block {@code b} at
     * {@code kBase + b·blockStride} and its scores at {@code sc[so + 8b ..]}: the same bits, the
     * blocks free to run side by side.
     */
    default void scores(float[] q, int qo, int heads, int hd, float[] k, int kBase, int blockStride, int blocks, float[] sc,
                        int so, int scStride) {
        for (int b = 0; b < blocks; b++) scores8(q, qo, heads, hd, k, kBase + b * blockStride, sc, so + 8 * b, scStride);
    }

    /**
     * Weighted V rows into {@code heads} outputs: for {@code g < heads}, {@code i < hd}:
     * {@code out[oo + g·hd + i] += w[wo + g·wStride + t] · v[vBase + (t − t0)·kvd + i]} for
     * {@code t} from {@code t0} to {@code t1 − 1} in order (positions of one V page).
     */
    void weightedV(float[] w, int wo, int wStride, int heads, int t0, int t1, float[] v, int vBase, int kvd, float[] out,
                   int oo, int hd);

    /**
     * Weighted values read from a K page ({@code kvd} floats per position, position-minor in
     * blocks of 8 as {@link #scores8} reads them, {@code t0}'s block at {@code kBase}): for
     * {@code g < heads}, {@code j < width},
     * {@code out[oo + g·hd + j] += Σ_t w[wo + g·wStride + t] · k[kBase + (t − t0)/8·8·kvd + 8j + t % 8]}
     * over {@code t} in {@code [t0, t1)}, positions of one page from a multiple of 8 ({@code t0 % 8 == 0});
     * positions past {@code t1} in the last block count as zero whatever the page holds there.
     * Each kernel fixes the order of every sum, whatever the batch. Latent attention's values are
     * the first {@code width} of its keys. {@code lanes} is scratch of 8 floats.
     */
    void weightedK(float[] w, int wo, int wStride, int heads, int t0, int t1, float[] k, int kBase, int kvd, int width,
                   float[] out, int oo, int hd, float[] lanes);

    /**
     * Whether a prompt run's attention may take its rows in the lanes of vectors ({@link RowLanes},
     * {@link RowLanes#usable}): the same bits as {@link #scores8} and {@link #weightedV}, on the SIMD kernels.
     */
    default boolean rowLanes() {
        return false;
    }

    /**
     * The native kernel for a decode step's attention over an f16/bf16 cache where it runs here and
     * gives these kernels' bits (one fused multiply-add chain per element, as {@link SimdAttention}'s);
     * null otherwise.
     */
    default NativeAttention nativeAttention() {
        return null;
    }

    /**
     * The matrix in the layout these kernels read fastest: the same matrix, or a copy made in
     * {@code arena} (for example {@link WeightLayout#Q4_0_SPANS}). Called once per matrix at load.
     */
    default WeightMatrix prepare(WeightMatrix w, java.lang.foreign.Arena arena) {
        return w;
    }

    /**
     * The row group {@link #prepare} would store {@code w} in ({@link WeightLayout#rowGroup}): a
     * repacked matrix can be sliced into row ranges starting at multiples of it.
     */
    default int rowGroup(WeightMatrix w) {
        return 1;
    }

    /** Whether {@link #matmul} rounds {@code w}'s input to 8 bits ({@link SharedRounding} can do it once per dispatch). */
    default boolean roundsInput(WeightMatrix w) {
        return false;
    }

    static Kernels of(boolean simd) {
        return simd ? new SimdKernels() : new ScalarKernels();
    }
}
