package dgr.engine.kernel;

/**
 * {@code java-scalar/1}: the obviously-correct reference. Each weight row is dequantized once
 * (exactly as ggml does) and dotted with every batch row by a plain left-to-right float sum.
 */
public final class ScalarKernels implements Kernels {
    @Override
    public String name() {
        return "java-scalar";
    }

    @Override
    public void matmul(WeightMatrix w, float[] x, int nRows, float[] out, int oStart, int oEnd, Scratch s) {
        if (w.layout() != WeightLayout.GGML) {
            throw new IllegalArgumentException("tensor '" + w.name() + "' is in " + w.layout() + " layout; the scalar kernels read GGML only");
        }
        int cols = w.cols(), rows = w.rows();
        float[] row = s.row;
        for (int o = oStart; o < oEnd; o++) {
            RowDecoder.decodeRow(w, o, row, 0);
            for (int b = 0; b < nRows; b++) {
                float sum = 0f;
                int xo = b * cols;
                for (int i = 0; i < cols; i++) sum += row[i] * x[xo + i];
                out[b * rows + o] = sum;
            }
        }
    }

    @Override
    public float dot(float[] a, int ao, float[] b, int bo, int n, Scratch s) {
        float sum = 0f;
        for (int i = 0; i < n; i++) sum += a[ao + i] * b[bo + i];
        return sum;
    }

    @Override
    public void axpy(float a, float[] x, int xo, float[] y, int yo, int n) {
        for (int i = 0; i < n; i++) y[yo + i] += a * x[xo + i];
    }
}
