package dgr.engine.kernel;

/**
 * One worker's preallocated buffers, so kernels allocate nothing per call. Each worker of a
 * {@link WorkerPool} owns exactly one.
 */
public final class Scratch {
    /** A decoded weight row (at least the widest matrix's columns). */
    public final float[] row;
    /** Attention scores (at least the context length). */
    public final float[] scores;
    /** Lanes for the fixed-order final reductions of SIMD accumulators: eight per batch row, up to four rows. */
    public final float[] lanes = new float[32];
    /**
     * The job epoch the caller runs under: it changes whenever input arrays may have been
     * rewritten, so per-input work cached below is redone.
     */
    public long epoch;
    /** Activations prepared for the 4-bit ({@link Q4Spans}) and byte ({@link ByteSpans}) span layouts. */
    final SpanInput nibbles = new SpanInput(), bytes = new SpanInput();
    /** Activations rounded to 8 bits for {@link Q8Rows}: per 32 values, and per 256 for the layouts that take that ({@link Q8Rows#span}). */
    final Q8Input eightBit = new Q8Input(), eightBitWide = new Q8Input();
    /** The current dispatch's input rounded once for all workers ({@link SharedRounding}), or null. */
    Q8Input shared;
    /** Heap segments over the output arrays {@link Q8Native} writes (a forward pass has about ten). */
    final HeapSegments segments = new HeapSegments();
    /** The input copied as it is to an aligned start, for Q8_0 ({@link SpanInput#copy}). */
    final SpanInput plain = new SpanInput();
    /**
     * Span kernels' scratch: 8 accumulator floats per batch row of a group in {@code [0, 32)}, then
     * the current weight row's scales and offsets as f32 from element 32 ({@code rowScales}).
     */
    float[] spanAcc;

    /** Bytes held by these buffers now (they grow to the widest input seen, then stay). */
    public long bytes() {
        long floats = row.length + scores.length + lanes.length + (spanAcc == null ? 0 : spanAcc.length);
        return 4 * floats + nibbles.bytes() + bytes.bytes() + plain.bytes() + eightBit.bytes() + eightBitWide.bytes();
    }

    public Scratch(int maxCols, int maxContext) {
        this.row = new float[maxCols];
        this.scores = new float[maxContext];
    }
}
