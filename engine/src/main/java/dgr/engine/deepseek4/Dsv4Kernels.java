package dgr.engine.deepseek4;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * The few vector helpers V4's own steps need beside the shared matrix kernels: dot products for
 * attention, RMSNorm, the gate functions. Every result is reduced in an order that depends only on
 * its length (never on the batch, the other rows or the thread), which is the batch-invariance
 * contract.
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
}
