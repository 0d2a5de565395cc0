package dgr.engine.deepseek4;

import dgr.engine.kernel.Exp;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * The vector helpers V4's own steps need beside the shared matrix kernels: dot products, softmax
 * weights and weighted sums for attention, the hyper-connection stream mixes, RMSNorm, the clamped
 * SwiGLU. Every result is computed in an order that depends only on its length (never on the
 * batch, the other rows or the thread), which is the batch-invariance contract; element-wise
 * vector steps (FMA, multiply, add, {@link Exp}) give the same bits in every compilation state.
 *
 * <p>Lane sums are taken with {@code lane(i)} in index order rather than {@code reduceLanes}: the
 * interpreter's and C2's reductions need not add lanes in the same order, and a session's first
 * tokens run interpreted.
 */
final class Dsv4Kernels {
    private static final VectorSpecies<Float> S = FloatVector.SPECIES_256;
    private static final int L = S.length();

    private Dsv4Kernels() {}

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

    /**
     * {@code y[yo + i] = Σ_s c[co + s·cs]·x[xo + s·width + i]} for {@code i < width} ({@code width} a
     * multiple of 8), over the {@code streams} streams in order: the first a product, then FMAs.
     */
    static void mixStreams(float[] x, int xo, int width, int streams, float[] c, int co, int cs, float[] y, int yo) {
        for (int i = 0; i < width; i += L) {
            FloatVector v = FloatVector.fromArray(S, x, xo + i).mul(c[co]);
            for (int s = 1; s < streams; s++) v = FloatVector.fromArray(S, x, xo + s * width + i).fma(FloatVector.broadcast(S, c[co + s * cs]), v);
            v.intoArray(y, yo + i);
        }
    }

    /** {@code y[yo + i] = p·f[fo + i] + y[yo + i]} for {@code i < width} (a multiple of 8), as one FMA. */
    static void addScaled(float[] f, int fo, float p, float[] y, int yo, int width) {
        for (int i = 0; i < width; i += L) {
            FloatVector.fromArray(S, f, fo + i).fma(FloatVector.broadcast(S, p), FloatVector.fromArray(S, y, yo + i)).intoArray(y, yo + i);
        }
    }

    /** {@code acc[ao + i] = fma(w, k[ko + i], acc[ao + i])} for {@code i < n}. */
    static void axpy(float w, float[] k, int ko, float[] acc, int ao, int n) {
        int i = 0;
        for (int up = n - L; i <= up; i += L) {
            FloatVector.fromArray(S, k, ko + i).fma(FloatVector.broadcast(S, w), FloatVector.fromArray(S, acc, ao + i)).intoArray(acc, ao + i);
        }
        for (; i < n; i++) acc[ao + i] = Math.fma(w, k[ko + i], acc[ao + i]);
    }

    /**
     * Softmax weights in place: {@code s[so + j] = e^(s[so + j] − max)} for {@code j < n} ({@link Exp}:
     * 0 below −87), returning their sum, taken in 8 lanes (element {@code j} into lane {@code j mod 8},
     * the tail past the last full vector one by one) and the lanes added in index order.
     */
    static float expSum(float[] s, int so, int n, float max, float[] lanes) {
        // The weights in place first (Exp: arrays in and out, no vector crosses the call), then summed.
        int v = n / L * L;
        Exp.exp(s, so, so + v, max);
        FloatVector sum = FloatVector.zero(S);
        int j = 0;
        for (; j < v; j += L) sum = sum.add(FloatVector.fromArray(S, s, so + j));
        sum.intoArray(lanes, 0);
        float t = 0f;
        for (int k = 0; k < L; k++) t += lanes[k];
        for (; j < n; j++) {
            s[so + j] = Exp.exp(s[so + j] - max);
            t += s[so + j];
        }
        return t;
    }

    /**
     * V4's SwiGLU on columns {@code [o0, o1)} of {@code m} rows of {@code ff}: {@code a = min(g, L)},
     * {@code v = clamp(u, −L, L)} when {@code L > 1e-6} (else {@code a = g}, {@code v = u}), then
     * {@code h = a·σ(a)·v}, the sigmoid from {@code t = e^(−|a|)} ({@link Exp}) as {@code 1/(1+t)} or
     * {@code t/(1+t)}, in vectors of 8 with the same steps one by one for a tail.
     */
    static void swiglu(float[] g, float[] u, float[] h, int m, int ff, int o0, int o1, float limit) {
        boolean clamp = limit > 1e-6f;
        float lo = clamp ? -limit : Float.NEGATIVE_INFINITY, hi = clamp ? limit : Float.POSITIVE_INFINITY;
        for (int r = 0; r < m; r++) {
            int i = r * ff + o0, end = r * ff + o1, vEnd = i + (end - i) / L * L;
            // t = e^(−|a|) through h first (Exp: arrays in and out, no vector crosses the call).
            for (int k = i; k < vEnd; k += L) FloatVector.fromArray(S, g, k).min(hi).abs().neg().intoArray(h, k);
            Exp.exp(h, i, vEnd, 0f);
            for (; i < vEnd; i += L) {
                FloatVector a = FloatVector.fromArray(S, g, i).min(hi);
                FloatVector v = FloatVector.fromArray(S, u, i).max(lo).min(hi);
                FloatVector t = FloatVector.fromArray(S, h, i);
                FloatVector one = FloatVector.broadcast(S, 1f);
                FloatVector sig = one.blend(t, a.compare(VectorOperators.LT, 0f)).div(t.add(1f));
                a.mul(sig).mul(v).intoArray(h, i);
            }
            for (; i < end; i++) {
                float a = Math.min(g[i], hi), v = Math.min(Math.max(u[i], lo), hi);
                float t = Exp.exp(-Math.abs(a));
                float sig = (a < 0f ? t : 1f) / (t + 1f);
                h[i] = a * sig * v;
            }
        }
    }
}
