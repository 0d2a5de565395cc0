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
    /** Eight lanes for the fixed-order final reduction of a SIMD accumulator. */
    public final float[] lanes = new float[16];
    /**
     * The job epoch the caller runs under: it changes whenever input arrays may have been
     * rewritten, so per-input work cached below is redone.
     */
    public long epoch;
    // 4-bit span kernels (Q4Spans): scaled activations, negated block sums, accumulators,
    // grown on first use and kept, and which input they were made from.
    float[] spanX, spanC, spanAcc;
    Object spanFor;
    int spanRows, spanCols;
    long spanEpoch = -1;
    // The same for Q6_K byte spans (Q6Spans): scaled per byte position, summed per 16 values.
    float[] byteX, byteC;
    Object byteFor;
    int byteRows, byteCols;
    long byteEpoch = -1;

    public Scratch(int maxCols, int maxContext) {
        this.row = new float[maxCols];
        this.scores = new float[maxContext];
    }
}
