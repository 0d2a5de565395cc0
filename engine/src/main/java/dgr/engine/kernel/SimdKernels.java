package dgr.engine.kernel;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * {@code java-simd/1}: Vector API kernels (256-bit float lanes).
 *
 * <p>The one reduction order every SIMD kernel follows, for each output element: the weight row
 * and the activation row are walked in 8-value chunks in order; chunk {@code c} is fused-multiply-
 * added into accumulator {@code c & 1} (two accumulators hide FMA latency); at the end the two
 * accumulators are added lane-wise and the 8 lanes summed in the fixed tree of {@link #sum8}.
 * Weights are dequantized exactly as ggml does before the FMA, so a fused kernel (decoding in
 * registers) and the generic one (decoding a row into scratch) give the same bits. Kernels for 4
 * batch rows and for 1 batch row follow the same order, so the batch size never changes a result.
 */
public final class SimdKernels implements Kernels {
    static final VectorSpecies<Float> F = FloatVector.SPECIES_256;

    @Override
    public String name() {
        return "java-simd";
    }

    @Override
    public void matmul(WeightMatrix w, float[] x, int nRows, float[] out, int oStart, int oEnd, Scratch s) {
        switch (w.type()) {
            case Q4_0 -> SimdQ4_0.matmul(w, x, nRows, out, oStart, oEnd, s.lanes);
            case Q8_0 -> SimdQ8_0.matmul(w, x, nRows, out, oStart, oEnd, s.lanes);
            case Q4_K -> SimdQ4K.matmul(w, x, nRows, out, oStart, oEnd, s.lanes);
            case F32 -> SimdF32.matmulSegment(w, x, nRows, out, oStart, oEnd, s.lanes);
            default -> {
                for (int o = oStart; o < oEnd; o++) {
                    RowDecoder.decodeRow(w, o, s.row, 0);
                    SimdF32.dotRows(s.row, w.cols(), x, nRows, out, w.rows(), o, s.lanes);
                }
            }
        }
    }

    @Override
    public float dot(float[] a, int ao, float[] b, int bo, int n, Scratch s) {
        FloatVector acc0 = FloatVector.zero(F), acc1 = FloatVector.zero(F);
        int i = 0;
        for (; i + 16 <= n; i += 16) {
            acc0 = FloatVector.fromArray(F, a, ao + i).fma(FloatVector.fromArray(F, b, bo + i), acc0);
            acc1 = FloatVector.fromArray(F, a, ao + i + 8).fma(FloatVector.fromArray(F, b, bo + i + 8), acc1);
        }
        if (i < n) acc0 = FloatVector.fromArray(F, a, ao + i).fma(FloatVector.fromArray(F, b, bo + i), acc0);
        acc0.add(acc1).intoArray(s.lanes, 0);
        return sum8(s.lanes);
    }

    @Override
    public void axpy(float a, float[] x, int xo, float[] y, int yo, int n) {
        FloatVector av = FloatVector.broadcast(F, a);
        for (int i = 0; i < n; i += 8) {
            FloatVector.fromArray(F, x, xo + i).fma(av, FloatVector.fromArray(F, y, yo + i)).intoArray(y, yo + i);
        }
    }

    /** The fixed lane reduction: ((l0+l1)+(l2+l3))+((l4+l5)+(l6+l7)). */
    static float sum8(float[] l) {
        return ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]));
    }
}
