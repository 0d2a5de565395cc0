package dgr.runtime;

/** How an iteration chooses between decode rows and prefill chunks; see docs/scheduler.md. */
public enum SchedulingPolicy {
    /**
     * A batch holds decode rows or prefill chunks, never both. Decode runs unless a prefill has
     * waited {@code maxPrefillWaitIterations}; prefill never holds decode back more than
     * {@code maxDecodeWaitIterations} iterations in a row.
     */
    DECODE_FIRST,
    /**
     * Sarathi-style: every decode row plus prefill chunks up to the token budget in one batch. On an
     * engine that does not accept mixed batches this behaves as {@link #DECODE_FIRST}.
     */
    MIXED
}
