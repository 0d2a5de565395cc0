package dgr.bench.target;

/**
 * What one request did, as the client saw it (and, in-process, as the scheduler accounted it). Times
 * are nanoseconds from the run's origin; {@code -1} means "did not happen" or "not available".
 *
 * @param id              request number within the run
 * @param level           the level label (e.g. {@code c4}, {@code r2.0}, {@code warmup})
 * @param tenant          tenant the request was sent for
 * @param client          virtual client index within the level
 * @param probe           a probe request (reported apart from the load)
 * @param startNanos      sent
 * @param endNanos        stream ended
 * @param tokenNanos      arrival time of each generated token (in-process) or each streamed chunk (HTTP)
 * @param promptTokens    prompt tokens processed (server usage or scheduler accounting), -1 unknown
 * @param outputTokens    generated tokens (server usage or accounting; else chunks counted)
 * @param countedTokens   tokens (in-process) or content chunks (HTTP) the client itself received
 * @param queueNanos      submission to admission (in-process only), -1 unavailable
 * @param sequenceId      the scheduler's sequence id (in-process only), -1 unavailable
 * @param finishReason    {@code stop}, {@code length}, {@code cancelled}, {@code error}, ...
 * @param error           why it failed, or null
 * @param servedBy        the node that served it, when a tracker says so ({@code X-Dgr-Node}), else null
 */
public record RequestRecord(long id, String level, String tenant, int client, boolean probe, long startNanos,
                            long endNanos, long[] tokenNanos, int promptTokens, int outputTokens, int countedTokens,
                            long queueNanos, long sequenceId, String finishReason, String error, String servedBy) {

    /** A request served by one known server (in-process, or a node addressed directly). */
    public RequestRecord(long id, String level, String tenant, int client, boolean probe, long startNanos,
                         long endNanos, long[] tokenNanos, int promptTokens, int outputTokens, int countedTokens,
                         long queueNanos, long sequenceId, String finishReason, String error) {
        this(id, level, tenant, client, probe, startNanos, endNanos, tokenNanos, promptTokens, outputTokens,
                countedTokens, queueNanos, sequenceId, finishReason, error, null);
    }

    public boolean ok() { return error == null; }

    /** First token arrival, or -1. */
    public long firstTokenNanos() { return tokenNanos.length == 0 ? -1 : tokenNanos[0]; }

    public double ttftMs() { return tokenNanos.length == 0 ? Double.NaN : (tokenNanos[0] - startNanos) / 1e6; }

    public double e2elMs() { return (endNanos - startNanos) / 1e6; }

    /** vLLM's TPOT: (e2el - ttft) / (output tokens - 1), for requests with more than one token. */
    public double tpotMs() {
        if (outputTokens < 2 || tokenNanos.length == 0) return Double.NaN;
        return (endNanos - tokenNanos[0]) / 1e6 / (outputTokens - 1);
    }

    /** Gaps between consecutive token (chunk) arrivals, in ms. */
    public double[] itlMs() {
        double[] out = new double[Math.max(0, tokenNanos.length - 1)];
        for (int i = 1; i < tokenNanos.length; i++) out[i - 1] = (tokenNanos[i] - tokenNanos[i - 1]) / 1e6;
        return out;
    }

    /** When the request stopped waiting to be served: admission (in-process) or else its first token. */
    public long servedFromNanos() {
        if (queueNanos >= 0) return startNanos + queueNanos;
        return tokenNanos.length == 0 ? endNanos : tokenNanos[0];
    }
}
