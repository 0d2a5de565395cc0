package dgr.bench.target;

/**
 * One scheduler iteration as the benchmark stores it (in-process only).
 *
 * @param iteration       the scheduler's iteration number
 * @param endNanos        when the benchmark saw it end, from the run's origin
 * @param rows            sessions with rows in the batch
 * @param prefillRows     sessions contributing a prefill chunk
 * @param decodeRows      sessions contributing a decode row
 * @param tokens          token positions in the forward pass
 * @param forwardNanos    the engine's forward call
 * @param overheadNanos   the scheduler's own work
 * @param stateBytesInUse state bytes held after the iteration
 * @param running         sessions running after it
 * @param waiting         sessions waiting after it
 */
public record IterationSample(long iteration, long endNanos, int rows, int prefillRows, int decodeRows, int tokens,
                              long forwardNanos, long overheadNanos, long stateBytesInUse, int running, int waiting) {
    public long durationNanos() { return forwardNanos + overheadNanos; }
}
