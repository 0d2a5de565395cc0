package dgr.engine.deepseek4;

/**
 * A dense float32 matrix of {@code rows × cols} starting at {@code off} in {@code w} (row-major,
 * one output per row: ggml's {@code {cols, rows}}). Expert stacks are several Mats over one array.
 */
record Mat(float[] w, int off, int rows, int cols) {
    Mat {
        if ((long) off + (long) rows * cols > w.length) throw new IllegalArgumentException("matrix exceeds its array");
    }

    static Mat of(float[] w, int rows, int cols) { return new Mat(w, 0, rows, cols); }

    /** Rows [first, first+count) as their own matrix (no copy). */
    Mat slice(int first, int count) { return new Mat(w, off + first * cols, count, cols); }

    float get(int r, int c) { return w[off + r * cols + c]; }
}
