package dgr.engine.kernel;

import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * Activations rounded to 8 bits for {@link Q8Rows} (one worker's, or a dispatch's shared by all its
 * workers: {@link SharedRounding}): per scale span ({@link #NARROW}: each 32-value block; {@link #WIDE}: 256 values,
 * eight blocks, for the kernels that sum a super-block in integers, {@link Q8Rows#span}) a scale
 * {@code d = amax / 127} over the span, per block {@code q = trunc(x·(1/d) + ½·sign x)} (nearest, halves away from
 * zero, in f32), and
 * {@code Σq} (the native kernels' offsets: Q4_0's {@code −8·Σq}); for the native kernels also the scales again
 * and {@code d·Σq} (a weight min's factor, {@link Q8Rows}), block-major. Like {@link SpanInput},
 * prepared once per input array, shape and job epoch, and kept while the same input comes back.
 * Where a native 8-bit image runs, it rounds ({@link Q8Native#round}: the same f32 steps, so the same
 * bytes); else the Vector API does ({@link #roundSpan}).
 *
 * <p>Rounding: a span whose largest magnitude is below 2^-100 becomes all zero (its products
 * could not reach a logit, and its scale would be subnormal); a NaN anywhere in a span makes its
 * scale NaN, so a NaN input still gives NaN outputs; infinities likewise.
 */
final class Q8Input {
    /** Blocks below this largest magnitude round to zero. */
    private static final float TINY = 0x1p-100f;
    /** Values per scale: one per 32-value block, or one per 256 values (every block of the eight carries it in {@link #d}). */
    static final int NARROW = 32, WIDE = 256;

    byte[] q = new byte[0];
    int[] sum = new int[0];
    /** Per block the sums of its first and last 16 values (Q6_K's 16-value sub-blocks). */
    int[] half = new int[0];
    float[] d = new float[0];
    /**
     * For the native kernels, block-major (block {@code j} of batch row {@code r} at {@code j·rows + r}, so the
     * 16 rows an AMX tile takes lie in one cache line, where row-major they lie in 16): {@code d}, and
     * {@code d·(float) Σq} as one f32 product, the factor of a weight's min (Q4_1, Q5_1, Q4_K, Q5_K), formed here
     * once where every kernel call formed it per block and row.
     */
    float[] dT = new float[0], dsumT = new float[0];
    /** Heap segments over the arrays above, for the native kernel; remade when an array grows. */
    MemorySegment qSeg = MemorySegment.ofArray(q), sumSeg = MemorySegment.ofArray(sum), halfSeg = MemorySegment.ofArray(half),
            dSeg = MemorySegment.ofArray(d), dTSeg = MemorySegment.ofArray(dT), dsumTSeg = MemorySegment.ofArray(dsumT);
    /** A heap segment over the input being rounded, for the native rounding. */
    MemorySegment xSeg = MemorySegment.ofArray(new float[0]);
    /** The inputs' segments, made once per array: a decode step rounds a few arrays in turn, and must not allocate. */
    private final HeapSegments xSegments = new HeapSegments();
    private Object from;
    private int rows, cols, span = NARROW;
    private long epoch = -1;

    /** Bytes held. */
    long bytes() {
        return q.length + 4L * sum.length + 4L * half.length + 4L * d.length + 8L * dT.length;
    }

    /** Rounds {@code x} ({@code nRows × cols}, cols a multiple of 32, of {@code span} if wide) per {@code span} values unless already held. */
    Q8Input prepare(float[] x, int nRows, int cols, int span, long epoch) {
        return prepare(Q8Native.KERNEL, x, nRows, cols, span, epoch);
    }

    /** {@link #prepare}, rounding with {@code kernel} (null: the Vector API; tests take each path). */
    Q8Input prepare(Q8Native kernel, float[] x, int nRows, int cols, int span, long epoch) {
        if (holds(x, nRows, cols, span, epoch)) return this;
        reserve(x, nRows, cols, span, epoch);
        roundRows(kernel, x, cols, 0, nRows);
        return this;
    }

    /**
     * Sizes the arrays for {@code x} ({@code nRows × cols}) and marks them as holding it rounded per {@code span}
     * values under {@code epoch}, before {@link #roundRows} fills them ({@link SharedRounding}: rows by several workers).
     */
    void reserve(float[] x, int nRows, int cols, int span, long epoch) {
        if (span != NARROW && (span != WIDE || cols % WIDE != 0)) {
            throw new IllegalArgumentException("activations of " + cols + " columns cannot be rounded per " + span + " values");
        }
        size(nRows * cols / 32);
        // Here, before a dispatch, not in roundRows, which several workers run at once.
        xSeg = xSegments.of(x);
        from = x;
        rows = nRows;
        this.cols = cols;
        this.span = span;
        this.epoch = epoch;
    }

    /** Rounds batch rows {@code [r0, r1)} of {@code x} into the arrays {@link #reserve} sized, as {@link #prepare} does. */
    void roundRows(float[] x, int cols, int r0, int r1) {
        roundRows(Q8Native.KERNEL, x, cols, r0, r1);
    }

    /**
     * {@link #roundRows(float[], int, int, int)} natively where {@code kernel} is not null (reading the input through
     * {@link #xSeg}, the array {@link #reserve} was given), else with the Vector API: the same bytes.
     */
    private void roundRows(Q8Native kernel, float[] x, int cols, int r0, int r1) {
        if (kernel != null) {
            kernel.round(this, r0, r1);
            return;
        }
        int perRow = cols / 32, blocks = span / 32;
        for (int r = r0; r < r1; r++) {
            for (int j = 0, b = r * perRow; j < perRow; j += blocks, b += blocks) {
                roundSpan(x, b, blocks);
                for (int i = 0; i < blocks; i++) blockMajor(b + i, (j + i) * rows + r);
            }
        }
    }

    /** Whether these arrays hold {@code x} ({@code nRows × cols}) rounded per {@code span} values under {@code epoch}. */
    boolean holds(float[] x, int nRows, int cols, int span, long epoch) {
        return from == x && rows == nRows && this.cols == cols && this.span == span && this.epoch == epoch;
    }

    /** Values per scale of the input held. */
    int span() {
        return span;
    }

    /** Values per batch row of the input held. */
    int cols() {
        return cols;
    }

    /** {@code x} rounded per {@code span} values in plain Java: the reference {@link #prepare}'s vector path must equal. */
    Q8Input reference(float[] x, int nRows, int cols, int span) {
        int blocks = nRows * cols / 32, per = span / 32;
        size(blocks);
        rows = nRows;
        this.cols = cols;
        this.span = span;
        for (int b = 0, perRow = cols / 32; b < blocks; b += per) {
            roundScalar(x, b, per);
            for (int i = 0; i < per; i++) blockMajor(b + i, ((b + i) % perRow) * nRows + (b + i) / perRow);
        }
        from = null;
        return this;
    }

    /** Grows the arrays to {@code blocks} blocks. */
    private void size(int blocks) {
        int n = 32 * blocks;
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
        if (dT.length < blocks) {
            dT = new float[blocks];
            dsumT = new float[blocks];
            dTSeg = MemorySegment.ofArray(dT);
            dsumTSeg = MemorySegment.ofArray(dsumT);
        }
    }

    private static final VectorSpecies<Float> F = FloatVector.SPECIES_256;

    /**
     * {@link #roundScalar}'s results with the Vector API, blocks {@code [b, b + blocks)} under one scale, where
     * their largest magnitude is finite and at least {@link #TINY}: the same f32 products and additions lane by
     * lane, the same truncation (Java's cast), so the same bytes ({@code Q8RowsTest}).
     */
    private void roundSpan(float[] x, int b, int blocks) {
        // Every vector stays inside this method: no vector crosses a call (Exp says why; here it would
        // be an allocation per block).
        int at0 = 32 * b;
        FloatVector m = FloatVector.fromArray(F, x, at0).abs();
        for (int c = 8; c < 32 * blocks; c += 8) m = m.max(FloatVector.fromArray(F, x, at0 + c).abs());
        // MAX keeps a NaN, as Math.max does; max is exact, so its order does not matter.
        float amax = m.reduceLanes(VectorOperators.MAX);
        if (!(amax >= TINY) || amax == Float.POSITIVE_INFINITY) {
            roundScalar(x, b, blocks);
            return;
        }
        float scale = amax / 127f, inv = 1f / scale;
        for (int i = 0; i < blocks; i++) roundBlock(x, b + i, scale, inv);
    }

    /** Block {@code b} under {@code scale} (finite, at least {@link #TINY} / 127) and its f32 inverse {@code inv}. */
    private void roundBlock(float[] x, int b, float scale, float inv) {
        int at = 32 * b;
        d[b] = scale;
        // Each half's quants added lane-wise, then across lanes once: two reductions a block, not four
        // (integer sums, so the order is free).
        IntVector lo = IntVector.zero(IntVector.SPECIES_256), hi = lo;
        for (int c = 0; c < 32; c += 8) {
            FloatVector s = FloatVector.fromArray(F, x, at + c).mul(inv);
            // copySign(0.5, s): the sign bit of s on 0.5's bits.
            FloatVector h = s.reinterpretAsInts().and(0x80000000).or(0x3F000000).reinterpretAsFloats();
            IntVector r = ((IntVector) s.add(h).convert(VectorOperators.F2I, 0)).max(-127).min(127);
            r.convertShape(VectorOperators.I2B, ByteVector.SPECIES_64, 0).reinterpretAsBytes().intoArray(q, at + c);
            if (c < 16) lo = lo.add(r);
            else hi = hi.add(r);
        }
        int first = lo.reduceLanes(VectorOperators.ADD), total = first + hi.reduceLanes(VectorOperators.ADD);
        sum[b] = total;
        half[2 * b] = first;
        half[2 * b + 1] = total - first;
    }

    /**
     * Block {@code b}'s scale and {@code d·(float) Σq} into the block-major arrays at {@code t} (its block in
     * its row times the rows, plus its row): the callers walk rows and blocks, so no division per block.
     */
    private void blockMajor(int b, int t) {
        dT[t] = d[b];
        dsumT[t] = d[b] * (float) sum[b];
    }

    /** Batch rows held (the block-major arrays' stride). */
    int rows() {
        return rows;
    }

    /** Blocks {@code [b, b + blocks)} under one scale, value by value: the reference. */
    private void roundScalar(float[] x, int b, int blocks) {
        float amax = 0f;
        // Math.max keeps a NaN, so a NaN span gets a NaN scale.
        for (int i = 32 * b; i < 32 * (b + blocks); i++) amax = Math.max(amax, Math.abs(x[i]));
        if (!(amax >= TINY)) {
            java.util.Arrays.fill(q, 32 * b, 32 * (b + blocks), (byte) 0);
            java.util.Arrays.fill(sum, b, b + blocks, 0);
            java.util.Arrays.fill(half, 2 * b, 2 * (b + blocks), 0);
            java.util.Arrays.fill(d, b, b + blocks, amax != amax ? Float.NaN : 0f);
            return;
        }
        float scale = amax / 127f, inv = 1f / scale;
        for (int k = b; k < b + blocks; k++) {
            d[k] = scale;
            int first = 0, total = 0;
            for (int i = 32 * k; i < 32 * k + 32; i++) {
                float v = x[i] * inv;
                int r = Math.max(-127, Math.min(127, (int) (v + Math.copySign(0.5f, v))));
                q[i] = (byte) r;
                total += r;
                if (i == 32 * k + 15) first = total;
            }
            sum[k] = total;
            half[2 * k] = first;
            half[2 * k + 1] = total - first;
        }
    }
}
