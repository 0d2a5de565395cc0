package dgr.runtime;

/**
 * The scheduler's knobs, each named after what it bounds (defaults in {@link #defaults()}).
 *
 * <p>Words: an engine's batch row is one token position. {@code maxBatchSessions} counts the
 * <em>sessions</em> that contribute to a batch (each adds one decode row or one prefill chunk) and
 * {@code maxBatchTokens} the token positions (engine rows) of one forward pass.
 *
 * @param policy                   decode-first or mixed
 * @param maxBatchSessions         most sessions in one batch; also the most sessions admitted at once
 *                                 (running), so every decode session gets a row in every decode
 *                                 batch. Default 16
 * @param maxBatchTokens           most token positions in one forward pass (≥ maxBatchSessions, ≤ the
 *                                 engine's maxRows). Default 64, the engines' default maxRows
 * @param maxPrefillChunk          most prompt tokens of one session in one iteration, so one huge
 *                                 prompt cannot hold the others back. Default 32
 * @param maxPrefillWaitIterations decode-first: a prefill waiting this many iterations gets the next
 *                                 one. Default 4
 * @param maxDecodeWaitIterations  decode-first: decode rows never wait more iterations than this in a
 *                                 row for prefill (≥ 1). Default 1
 * @param maxWaitingSessions       bound of the waiting queue; a submission beyond it is rejected
 *                                 {@link RejectReason#OVER_CAPACITY}. Default 256
 * @param stateBudgetBytes         state bytes this scheduler may reserve for its sessions. A session
 *                                 reserves {@code layout.bytesForTokens(prompt + maxTokens)} at
 *                                 admission, so it never runs out mid-flight. Default 1 GiB
 * @param fairness                 tenant service counters; off = admission in arrival order
 * @param promptTokenWeight        service units per processed prompt token. Default 1
 * @param generatedTokenWeight     service units per generated token. Default 2
 */
public record SchedulerConfig(SchedulingPolicy policy, int maxBatchSessions, int maxBatchTokens, int maxPrefillChunk,
                              int maxPrefillWaitIterations, int maxDecodeWaitIterations, int maxWaitingSessions,
                              long stateBudgetBytes, boolean fairness, int promptTokenWeight,
                              int generatedTokenWeight) {
    public SchedulerConfig {
        if (policy == null) throw new IllegalArgumentException("policy is required");
        positive("maxBatchSessions", maxBatchSessions);
        positive("maxBatchTokens", maxBatchTokens);
        positive("maxPrefillChunk", maxPrefillChunk);
        positive("maxDecodeWaitIterations", maxDecodeWaitIterations);
        if (maxPrefillWaitIterations < 0) throw new IllegalArgumentException("maxPrefillWaitIterations must be >= 0");
        if (maxWaitingSessions < 0) throw new IllegalArgumentException("maxWaitingSessions must be >= 0");
        if (stateBudgetBytes <= 0) throw new IllegalArgumentException("stateBudgetBytes must be > 0");
        if (promptTokenWeight < 0 || generatedTokenWeight < 0 || promptTokenWeight + generatedTokenWeight == 0) {
            throw new IllegalArgumentException("token weights must be >= 0 and not both 0");
        }
        if (maxBatchTokens < maxBatchSessions) {
            // Every running session must fit one decode row in a batch, or decode waits are unbounded.
            throw new IllegalArgumentException("maxBatchTokens (" + maxBatchTokens + ") must be >= maxBatchSessions ("
                    + maxBatchSessions + ")");
        }
    }

    private static void positive(String name, int v) {
        if (v < 1) throw new IllegalArgumentException(name + " must be >= 1, got " + v);
    }

    public static SchedulerConfig defaults() {
        return new SchedulerConfig(SchedulingPolicy.DECODE_FIRST, 16, 64, 32, 4, 1, 256, 1L << 30, true, 1, 2);
    }

    public SchedulerConfig withPolicy(SchedulingPolicy p) {
        return new SchedulerConfig(p, maxBatchSessions, maxBatchTokens, maxPrefillChunk, maxPrefillWaitIterations,
                maxDecodeWaitIterations, maxWaitingSessions, stateBudgetBytes, fairness, promptTokenWeight,
                generatedTokenWeight);
    }

    public SchedulerConfig withBatch(int rows, int tokens) {
        return new SchedulerConfig(policy, rows, tokens, maxPrefillChunk, maxPrefillWaitIterations,
                maxDecodeWaitIterations, maxWaitingSessions, stateBudgetBytes, fairness, promptTokenWeight,
                generatedTokenWeight);
    }

    public SchedulerConfig withMaxPrefillChunk(int chunk) {
        return new SchedulerConfig(policy, maxBatchSessions, maxBatchTokens, chunk, maxPrefillWaitIterations,
                maxDecodeWaitIterations, maxWaitingSessions, stateBudgetBytes, fairness, promptTokenWeight,
                generatedTokenWeight);
    }

    public SchedulerConfig withWaitBounds(int prefillWait, int decodeWait) {
        return new SchedulerConfig(policy, maxBatchSessions, maxBatchTokens, maxPrefillChunk, prefillWait, decodeWait,
                maxWaitingSessions, stateBudgetBytes, fairness, promptTokenWeight, generatedTokenWeight);
    }

    public SchedulerConfig withMaxWaitingSessions(int n) {
        return new SchedulerConfig(policy, maxBatchSessions, maxBatchTokens, maxPrefillChunk, maxPrefillWaitIterations,
                maxDecodeWaitIterations, n, stateBudgetBytes, fairness, promptTokenWeight, generatedTokenWeight);
    }

    public SchedulerConfig withStateBudgetBytes(long bytes) {
        return new SchedulerConfig(policy, maxBatchSessions, maxBatchTokens, maxPrefillChunk, maxPrefillWaitIterations,
                maxDecodeWaitIterations, maxWaitingSessions, bytes, fairness, promptTokenWeight, generatedTokenWeight);
    }

    public SchedulerConfig withFairness(boolean on) {
        return new SchedulerConfig(policy, maxBatchSessions, maxBatchTokens, maxPrefillChunk, maxPrefillWaitIterations,
                maxDecodeWaitIterations, maxWaitingSessions, stateBudgetBytes, on, promptTokenWeight,
                generatedTokenWeight);
    }

    public SchedulerConfig withTokenWeights(int prompt, int generated) {
        return new SchedulerConfig(policy, maxBatchSessions, maxBatchTokens, maxPrefillChunk, maxPrefillWaitIterations,
                maxDecodeWaitIterations, maxWaitingSessions, stateBudgetBytes, fairness, prompt, generated);
    }

    /** Whether batches may hold decode rows and prefill chunks together on this engine. */
    public boolean mixesOn(boolean engineAcceptsMixed) {
        return policy == SchedulingPolicy.MIXED && engineAcceptsMixed;
    }

    /**
     * Most consecutive iterations a running decode session goes without a row (docs/scheduler.md):
     * 0 when batches mix, else {@code maxDecodeWaitIterations}.
     */
    public int decodeWaitBound(boolean engineAcceptsMixed) {
        return mixesOn(engineAcceptsMixed) ? 0 : maxDecodeWaitIterations;
    }

    /**
     * Most consecutive iterations an admitted session in PREFILL goes without a chunk
     * (docs/scheduler.md). With {@code k} sessions sure to get a chunk in each prefill-serving
     * iteration, a session is served within {@code ceil(maxBatchSessions / k)} of them; mixed batches
     * serve prefill every iteration, decode-first at least once in every
     * {@code max(1, maxPrefillWaitIterations) + 1}.
     */
    public int prefillWaitBound(boolean engineAcceptsMixed) {
        if (mixesOn(engineAcceptsMixed)) {
            // Decode rows take at most maxBatchSessions - 1 tokens when a prefill is running too.
            int k = Math.max(1, (maxBatchTokens - (maxBatchSessions - 1)) / maxPrefillChunk);
            return ceilDiv(maxBatchSessions, k) - 1;
        }
        int k = Math.max(1, maxBatchTokens / maxPrefillChunk);
        // Runs of iterations without prefill last at most maxPrefillWaitIterations, or 1 when that
        // is 0 (a decode forced by maxDecodeWaitIterations after a prefill).
        return ceilDiv(maxBatchSessions, k) * (Math.max(1, maxPrefillWaitIterations) + 1) - 1;
    }

    /**
     * The most one backlogged tenant's service can exceed another's (docs/scheduler.md): {@code (N + 1) × U},
     * where {@code N} is the most sessions running at once ({@code maxBatchSessions}, or fewer when the
     * budget holds fewer reservations) and {@code U} the most service one session can take
     * ({@code promptTokenWeight × maxPromptTokens + generatedTokenWeight × maxTokens}); the extra
     * {@code U} is the credit a tenant may bring back from idle. Holds from an empty start while both
     * tenants keep sessions submitted; over an arbitrary window the bound is twice it.
     */
    public long fairnessBound(int maxPromptTokens, int maxTokens, long smallestReservationBytes) {
        long n = Math.min(maxBatchSessions, stateBudgetBytes / Math.max(1, smallestReservationBytes));
        long u = (long) promptTokenWeight * maxPromptTokens + (long) generatedTokenWeight * maxTokens;
        return (n + 1) * u;
    }

    private static int ceilDiv(int a, int b) { return (a + b - 1) / b; }
}
