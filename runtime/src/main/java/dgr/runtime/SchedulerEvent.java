package dgr.runtime;

/** What a scheduler reports to its {@link SchedulerListener}s (node metrics, the benchmark, tests). */
public sealed interface SchedulerEvent {
    /**
     * One iteration: one batch, one compatibility key.
     *
     * @param iteration        0-based iteration number of this scheduler
     * @param key              the key every row of the batch shared
     * @param sessions         sessions with rows in the batch (prefill + decode)
     * @param prefillChunks    sessions contributing a prefill chunk (one chunk each)
     * @param decodeRows       sessions contributing a decode row
     * @param tokens           token positions in the forward pass
     * @param forwardNanos     the engine's forward call
     * @param overheadNanos    the scheduler's own work this iteration (admission, planning, sampling
     *                         and streaming results), excluding the forward call
     * @param stateBytesInUse  bytes held by running sessions' slots after the iteration
     * @param reservedBytes    bytes reserved for running sessions after the iteration
     * @param stateBudgetBytes the budget
     * @param running          sessions admitted after the iteration
     * @param waiting          sessions waiting for admission after the iteration
     * @param prefillSessions  sequence ids of the prefill chunks, in batch order
     * @param decodeSessions   sequence ids of the decode rows, in batch order
     */
    record IterationEvent(long iteration, CompatibilityKey key, int sessions, int prefillChunks, int decodeRows, int tokens,
                          long forwardNanos, long overheadNanos, long stateBytesInUse, long reservedBytes,
                          long stateBudgetBytes, int running, int waiting, long[] prefillSessions,
                          long[] decodeSessions) implements SchedulerEvent {
        public double occupancy(int maxBatchSessions) { return (double) sessions / maxBatchSessions; }
    }

    /** A session got its state reservation and joined the running set. */
    record SessionAdmitted(long sequenceId, String tenant, long iteration, long queueNanos, long reservedBytes)
            implements SchedulerEvent {}

    /** A session ended (finished, cancelled or failed) with its final accounting. */
    record SessionEnded(long sequenceId, String tenant, long iteration, Phase phase, FinishReason reason,
                        String message, Accounting accounting) implements SchedulerEvent {}

    /** A submission was refused. */
    record SessionRejected(String tenant, RejectReason reason, String message) implements SchedulerEvent {}
}
