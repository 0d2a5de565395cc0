package dgr.engine.kernel;

import java.lang.foreign.MemorySegment;

/**
 * One worker's activations rounded to 8 bits for {@link Q8Rows}: per 32-value block a scale
 * {@code d = amax / 127}, {@code q = round(x / d)} (half away from zero, as {@code x·(1/d)}), and
 * {@code Σq} (the native kernels' offsets: Q4_0's {@code −8·Σq}). Like {@link SpanInput},
 * prepared once per input array, shape and job epoch, and kept while the same input comes back.
 *
 * <p>Rounding: a block whose largest magnitude is below 2^-100 becomes all zero (its products
 * could not reach a logit, and its scale would be subnormal); a NaN anywhere in a block makes its
 * scale NaN, so a NaN input still gives NaN outputs; infinities likewise.
 */
final class Q8Input {
    /** Blocks below this largest magnitude round to zero. */
    private static final float TINY = 0x1p-100f;

    byte[] q = new byte[0];
    int[] sum = new int[0];
    /** Per block the sums of its first and last 16 values (Q6_K's 16-value sub-blocks). */
    int[] half = new int[0];
    float[] d = new float[0];
    /** Heap segments over the arrays above, for the native kernel; remade when an array grows. */
    MemorySegment qSeg = MemorySegment.ofArray(q), sumSeg = MemorySegment.ofArray(sum), halfSeg = MemorySegment.ofArray(half), dSeg = MemorySegment.ofArray(d);
    private Object from;
    private int rows, cols;
    private long epoch = -1;

    /** Bytes held. */
    long bytes() {
        return q.length + 4L * sum.length + 4L * half.length + 4L * d.length;
    }

    /** Rounds {@code x} ({@code nRows × cols}, cols a multiple of 32) unless already held. */
    Q8Input prepare(float[] x, int nRows, int cols, long epoch) {
        if (from == x && rows == nRows && this.cols == cols && this.epoch == epoch) return this;
        int n = nRows * cols, blocks = n / 32;
        if (q.length < n) {
            q = new byte[n];
            qSeg = MemorySegment.ofArray(q);
        }
        if (sum.length < blocks) {
            sum = new int[blocks];
            sumSeg = MemorySegment.ofArray(sum);
        }
        if (half.length < 2 * blocks) {
            half = new int[2 * blocks];
            halfSeg = MemorySegment.ofArray(half);
        }
        if (d.length < blocks) {
            d = new float[blocks];
            dSeg = MemorySegment.ofArray(d);
        }
        for (int b = 0; b < blocks; b++) roundBlock(x, 32 * b, b);
        from = x;
        rows = nRows;
        this.cols = cols;
        this.epoch = epoch;
        return this;
    }

    private void roundBlock(float[] x, int at, int b) {
        float amax = 0f;
        // Math.max keeps a NaN, so a NaN block gets a NaN scale.
        for (int i = 0; i < 32; i++) amax = Math.max(amax, Math.abs(x[at + i]));
        if (!(amax >= TINY)) {
            java.util.Arrays.fill(q, at, at + 32, (byte) 0);
            sum[b] = 0;
            half[2 * b] = half[2 * b + 1] = 0;
            d[b] = amax != amax ? Float.NaN : 0f;
            return;
        }
        float scale = amax / 127f, inv = 1f / scale;
        d[b] = scale;
        int first = 0, total = 0;
        for (int i = 0; i < 32; i++) {
            float v = x[at + i] * inv;
            int r = Math.max(-127, Math.min(127, (int) (v + Math.copySign(0.5f, v))));
            q[at + i] = (byte) r;
            total += r;
            if (i == 15) first = total;
        }
        sum[b] = total;
        half[2 * b] = first;
        half[2 * b + 1] = total - first;
    }
}
