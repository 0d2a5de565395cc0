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

    /** {@code sum a[ao + i] * b[bo + i]} over {@code i < n} ({@code n} a multiple of 8). */
    float dot(float[] a, int ao, float[] b, int bo, int n, Scratch s);

    /** {@code y[yo + i] += a * x[xo + i]} for {@code i < n} ({@code n} a multiple of 8). */
    void axpy(float a, float[] x, int xo, float[] y, int yo, int n);

    /**
     * The matrix in the layout these kernels read fastest: the same matrix, or a copy made in
     * {@code arena} (for example {@link WeightLayout#Q4_0_SPANS}). Called once per matrix at load.
     */
    default WeightMatrix prepare(WeightMatrix w, java.lang.foreign.Arena arena) {
        return w;
    }

    static Kernels of(boolean simd) {
        return simd ? new SimdKernels() : new ScalarKernels();
    }
}
