package dgr.engine;

/**
 * An executor for one stage of one model: runs one {@link Batch} over the stage's layer span.
 * Knows nothing of HTTP, owners or tenants. Not thread-safe: one scheduler loop drives it.
 *
 * <p>Contract (DESIGN.md 1): every output element is reduced in a fixed order that does not depend
 * on the batch's size, on the other rows, or on which thread computed it.
 */
public interface Engine extends AutoCloseable {
    EngineId id();

    EngineFeatures features();

    Recipe recipe();

    StateLayout stateLayout();

    /** Schema of this stage's boundary input (when not first) and output (when not last). */
    BoundarySchema boundarySchema();

    ModelInfo info();

    /** A new empty state slot for one session. */
    StateSlot openSlot();

    /**
     * Runs the batch. Rows' K/V (or V4 state) are appended to their slots. Throws
     * {@link IllegalArgumentException} for rows that break the batch rules (position not at the
     * slot's length, position past the context, token out of range) before touching any slot.
     */
    ForwardResult forward(Batch batch);

    /**
     * Bytes this engine holds now in working buffers beside its weights and the sessions' state:
     * activations sized for its batch rows, per-worker scratch, and buffers that grow with what
     * batches have needed so far (a mixture of experts' per-expert gathers), or -1 where the
     * engine does not count them. Read from other threads for reports: a value from between two
     * steps, never torn in a way that matters for a report.
     */
    default long workspaceBytes() {
        return -1;
    }

    /**
     * Bytes of session state this engine keeps pooled for reuse (freed K/V pages), beside what the
     * sessions hold; 0 where it pools nothing. Read from other threads for metrics.
     */
    default long pooledStateBytes() {
        return 0;
    }

    /**
     * Says the caller will not run a forward pass until something outside this process answers (a
     * route's neighbour computing its span): the engine's idle worker threads give their cores back
     * at once instead of spinning first. The next {@link #forward} wakes them. Only a hint: the
     * results are the same bits either way.
     */
    default void rest() {}

    /**
     * Says a forward pass is about to come (its rows have arrived): idle worker threads wake now and
     * wait for it, in parallel with the caller getting ready. Any thread may call it; only a hint.
     */
    default void wake() {}

    @Override
    void close();
}
