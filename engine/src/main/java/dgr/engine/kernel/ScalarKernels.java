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
    public void scores8(float[] q, int qo, int heads, int hd, float[] k, int kBase, float[] sc, int so, int scStride) {
        for (int g = 0; g < heads; g++) {
            for (int j = 0; j < 8; j++) {
                float sum = 0f;
                for (int d = 0; d < hd; d++) sum += q[qo + g * hd + d] * k[kBase + 8 * d + j];
                sc[so + g * scStride + j] = sum;
            }
        }
    }

    @Override
    public void weightedV(float[] w, int wo, int wStride, int heads, int t0, int t1, float[] v, int vBase, int kvd,
                          float[] out, int oo, int hd) {
        for (int g = 0; g < heads; g++) {
            for (int t = t0; t < t1; t++) {
                float a = w[wo + g * wStride + t];
                int vo = vBase + (t - t0) * kvd;
                for (int i = 0; i < hd; i++) out[oo + g * hd + i] += a * v[vo + i];
            }
        }
    }

    /** Per output, position by position in order from {@code t0}. */
    @Override
    public void weightedK(float[] w, int wo, int wStride, int heads, int t0, int t1, float[] k, int kBase, int kvd, int width,
                          float[] out, int oo, int hd, float[] lanes) {
        for (int g = 0; g < heads; g++) {
            for (int t = t0; t < t1; t++) {
                float a = w[wo + g * wStride + t];
                int base = kBase + (t - t0) / 8 * 8 * kvd + t % 8;
                for (int j = 0; j < width; j++) out[oo + g * hd + j] += a * k[base + 8 * j];
            }
        }
    }
}
