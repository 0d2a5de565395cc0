package dgr.engine.deepseek4;

import java.util.concurrent.ForkJoinPool;
import java.util.stream.IntStream;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * The few dense kernels V4 needs. Every output element is one dot product reduced in an order
 * that depends only on its length (never on the batch, the other rows or the thread), which is the
 * batch-invariance contract. Threads split the output rows of a matrix, never a reduction.
 *
 * <p>Lane sums are taken with {@code lane(i)} in index order rather than {@code reduceLanes}: the
 * interpreter's and C2's reductions need not add lanes in the same order, and a session's first
 * tokens run interpreted.
 */
final class Dsv4Kernels {
    private static final VectorSpecies<Float> S = FloatVector.SPECIES_256;
    private static final int L = S.length();
    /** Below this many multiply-adds a matmul stays on the calling thread. */
    private static final long PARALLEL_WORK = 1 << 16;

    private final boolean simd;
    private final ForkJoinPool pool; // null: single-threaded

    Dsv4Kernels(boolean simd, int threads) {
        this.simd = simd;
        this.pool = threads > 1 ? new ForkJoinPool(threads) : null;
    }

    void close() {
        if (pool != null) pool.shutdownNow();
    }

    float dot(float[] a, int ao, float[] b, int bo, int n) {
        return simd ? dotSimd(a, ao, b, bo, n) : dotScalar(a, ao, b, bo, n);
    }

    static float dotScalar(float[] a, int ao, float[] b, int bo, int n) {
        float s = 0f;
        for (int i = 0; i < n; i++) s += a[ao + i] * b[bo + i];
        return s;
    }

    static float dotSimd(float[] a, int ao, float[] b, int bo, int n) {
        int i = 0;
        FloatVector acc0 = FloatVector.zero(S), acc1 = FloatVector.zero(S);
        for (int up = n - 2 * L; i <= up; i += 2 * L) {
            acc0 = FloatVector.fromArray(S, a, ao + i).fma(FloatVector.fromArray(S, b, bo + i), acc0);
            acc1 = FloatVector.fromArray(S, a, ao + i + L).fma(FloatVector.fromArray(S, b, bo + i + L), acc1);
        }
        for (int up = n - L; i <= up; i += L) {
            acc0 = FloatVector.fromArray(S, a, ao + i).fma(FloatVector.fromArray(S, b, bo + i), acc0);
        }
        FloatVector acc = acc0.add(acc1);
        float s = 0f;
        for (int k = 0; k < L; k++) s += acc.lane(k);
        for (; i < n; i++) s = Math.fma(a[ao + i], b[bo + i], s);
        return s;
    }

    /**
     * {@code y[r·yStride + yOff + o] = W[o] · x[r·xStride + xOff ..]} for rows r < n. Each weight row
     * is read once for all n rows (it stays in cache while the rows go by).
     */
    void matmul(Mat w, float[] x, int xOff, int xStride, float[] y, int yOff, int yStride, int n) {
        int rows = w.rows(), cols = w.cols();
        if (pool == null || (long) rows * cols * n < PARALLEL_WORK || rows < 8) {
            matmulRange(w, x, xOff, xStride, y, yOff, yStride, n, 0, rows);
            return;
        }
        int chunks = Math.min(rows, pool.getParallelism() * 4);
        pool.submit(() -> IntStream.range(0, chunks).parallel().forEach(c -> {
            int o0 = (int) ((long) rows * c / chunks), o1 = (int) ((long) rows * (c + 1) / chunks);
            matmulRange(w, x, xOff, xStride, y, yOff, yStride, n, o0, o1);
        })).join();
    }

    private void matmulRange(Mat w, float[] x, int xOff, int xStride, float[] y, int yOff, int yStride, int n, int o0, int o1) {
        float[] a = w.w();
        int cols = w.cols();
        for (int o = o0; o < o1; o++) {
            int wo = w.off() + o * cols;
            for (int r = 0; r < n; r++) y[r * yStride + yOff + o] = dot(a, wo, x, r * xStride + xOff, cols);
        }
    }

    /** Runs {@code body(i)} for i < n, on the pool when there is one; bodies must write disjoint data. */
    void forEach(int n, java.util.function.IntConsumer body) {
        if (pool == null || n < 2) {
            for (int i = 0; i < n; i++) body.accept(i);
            return;
        }
        pool.submit(() -> IntStream.range(0, n).parallel().forEach(body)).join();
    }

    /** RMSNorm of x[xo..xo+n) into y (which may be x), times w when w is not null. Sum in double. */
    static void rmsNorm(float[] x, int xo, float[] y, int yo, int n, float[] w, float eps) {
        double ss = 0;
        for (int i = 0; i < n; i++) ss += (double) x[xo + i] * x[xo + i];
        float inv = (float) (1.0 / Math.sqrt(ss / n + eps));
        if (w == null) {
            for (int i = 0; i < n; i++) y[yo + i] = x[xo + i] * inv;
        } else {
            for (int i = 0; i < n; i++) y[yo + i] = x[xo + i] * inv * w[i];
        }
    }

    static float sigmoid(float z) {
        return (float) (1.0 / (1.0 + Math.exp(-z)));
    }

    static float silu(float z) {
        return (float) (z / (1.0 + Math.exp(-z)));
    }
}
