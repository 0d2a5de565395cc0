package dgr.engine.kernel;

import static dgr.engine.kernel.SimdKernels.F;
import static dgr.engine.kernel.SimdKernels.sum8;

import jdk.incubator.vector.FloatVector;

/**
 * One worker's activations prepared for a span layout ({@link Q4Spans}, {@link ByteSpans}): the
 * input scaled per chunk position, the negated block sums, and which input they were made from.
 * A worker keeps them while the same input array, shape and job epoch come back for its next
 * chunk, so an input is prepared once per worker, not once per chunk. Grown on first use, kept.
 *
 * <p>{@link #scaled} starts at element {@link #PAD}, which is 32-byte aligned
 * when the JVM aligns objects to 32 bytes ({@link HeapAlignment}): the kernels' activation loads
 * then never straddle a cache line.
 */
final class SpanInput {
    /** First used element of {@link #scaled}. */
    static final int PAD = HeapAlignment.FLOAT_PAD;

    float[] scaled, sums;
    private Object from;
    private int rows, cols;
    private long epoch = -1;

    /**
     * True if this already holds {@code x} ({@code nRows × cols}) prepared under {@code epoch};
     * otherwise sizes the buffers ({@code cols / perSum} sums per row), records the input and
     * returns false so the caller fills them.
     */
    private boolean reuse(float[] x, int nRows, int cols, long epoch, int perSum) {
        if (holds(x, nRows, cols, epoch)) return true;
        int n = nRows * cols;
        growScaled(n);
        if (sums == null || sums.length < n / perSum) sums = new float[n / perSum];
        remember(x, nRows, cols, epoch);
        return false;
    }

    private void growScaled(int n) {
        if (scaled == null || scaled.length < PAD + n) scaled = new float[PAD + n];
    }

    /** Bytes held by the prepared activations and sums. */
    long bytes() {
        return 4L * ((scaled == null ? 0 : scaled.length) + (sums == null ? 0 : sums.length));
    }

    private boolean holds(float[] x, int nRows, int cols, long epoch) {
        return from == x && rows == nRows && this.cols == cols && this.epoch == epoch;
    }

    private void remember(float[] x, int nRows, int cols, long epoch) {
        from = x;
        rows = nRows;
        this.cols = cols;
        this.epoch = epoch;
    }

    /**
     * Copies {@code x} ({@code nRows × cols}) as it is into {@link #scaled} from element
     * {@link #PAD}, unless already held: aligned activations for kernels that read the input
     * unscaled ({@link SimdQ8_0}). {@link #sums} are left alone.
     */
    SpanInput copy(float[] x, int nRows, int cols, long epoch) {
        if (holds(x, nRows, cols, epoch)) return this;
        int n = nRows * cols;
        growScaled(n);
        System.arraycopy(x, 0, scaled, PAD, n);
        remember(x, nRows, cols, epoch);
        return this;
    }

    /**
     * Prepares {@code x} ({@code nRows × cols}) unless already held, into {@link #scaled} from
     * element {@link #PAD}: 8-value chunk {@code c} of each 64-value stretch is multiplied by
     * {@code chunkScale[c % chunkScale.length]} (powers of two: exact). Every {@code perSum} values
     * (a block) get the negated sum {@code −sum8(v)}, {@code v = chunk0 + chunk1 + …} added
     * lane-wise in order.
     */
    SpanInput prepare(float[] x, int nRows, int cols, long epoch, float[] chunkScale, int perSum, float[] lanes) {
        if (reuse(x, nRows, cols, epoch, perSum)) return this;
        int n = nRows * cols, mask = chunkScale.length - 1;
        for (int i = 0; i < n; i += 8) {
            FloatVector v = FloatVector.fromArray(F, x, i).mul(chunkScale[(i >> 3) & mask]);
            // A scaled activation below the smallest normal float (|x| under about 2^-110) becomes
            // 0: every FMA that met it as a subnormal would take an Intel microcode assist, in
            // every weight row. Its products are below 2^-122, nothing a logit can show.
            v.blend(0f, v.abs().lt(Float.MIN_NORMAL)).intoArray(scaled, PAD + i);
        }
        for (int i = 0; i < n; i += perSum) {
            FloatVector v = FloatVector.fromArray(F, x, i);
            for (int c = 8; c < perSum; c += 8) v = v.add(FloatVector.fromArray(F, x, i + c));
            v.intoArray(lanes, 0);
            sums[i / perSum] = -sum8(lanes);
        }
        return this;
    }
}
