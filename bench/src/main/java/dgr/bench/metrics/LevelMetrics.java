package dgr.bench.metrics;

import java.util.List;

/**
 * Everything measured at one level, with vLLM's metric names and definitions where vLLM has one:
 * throughputs over the level's duration (first request sent to last one ended), TTFT, TPOT
 * ({@code (e2el - ttft) / (output tokens - 1)} per request), ITL (every gap between streamed
 * tokens, pooled) and E2EL. Probe requests are excluded here and reported in {@link #probe}. How steady the
 * output throughput was within the level is {@link #outputThroughputSpread} (null when too few tokens).
 */
public record LevelMetrics(String label, String mode, int concurrency, double rate, int completed, int failed,
                           double durationS, long totalInputTokens, long totalOutputTokens, double requestThroughput,
                           Double requestGoodput, double outputThroughput, double totalTokenThroughput,
                           double perSessionOutputThroughput, Summary ttftMs, Summary tpotMs, Summary itlMs,
                           Summary e2elMs, Summary queueTimeMs, String queueTimeSource, Batch batch, Memory memory,
                           Consistency consistency, Fairness fairness, Probe probe, ThroughputSpread outputThroughputSpread) {

    /**
     * @param occupancy      mean rows per iteration ÷ row limit
     * @param pipelineBubble against a route's head: each stage's fraction of the level it waited
     *                       ("head", then each later stage by its span "A-B"); null otherwise
     */
    public record Batch(String source, Integer iterations, Double meanRowsPerIteration, Integer rowLimit,
                        Double occupancy, Double prefillRowShare, Double decodeRowShare,
                        java.util.Map<String, Double> pipelineBubble) {}

    /**
     * @param heapAfterGcBytes   this JVM's used heap right after a full GC at the level's end
     * @param processRssBytes    this process's resident set (/proc/self/status VmRSS); in HTTP mode the
     *                           benchmark client's, not the server's
     * @param serverRssBytes     the server's resident set when its /metrics exports it
     */
    public record Memory(Long heapAfterGcBytes, Long processRssBytes, Long serverRssBytes, Double stateBytesInUseMean,
                         Long stateBytesInUseMax, Long stateBudgetBytes) {}

    /**
     * Cross-checks of the counts (in-process). Null fields were not checkable on this target.
     *
     * @param tokensCounted       tokens the clients received
     * @param tokensGenerated     tokens the scheduler accounted as generated
     * @param rowsAccounted       prompt + decode positions the accounting says were processed
     * @param rowsInIterations    token positions summed over the level's iterations
     */
    public record Consistency(long tokensCounted, long tokensGenerated, Long rowsAccounted, Long rowsInIterations,
                              boolean consistent) {}

    public record Fairness(Double jainIndex, Double largestServiceGap, Double maxRequestService,
                           List<TenantService.Share> tenantShares, Integer longestDecodeStallIterations,
                           Double longestDecodeStallMs, Integer longestPrefillWaitIterations,
                           Double longestPrefillWaitMs, List<Check> checks) {}

    /**
     * @param stallFactor probe p50 E2EL under load ÷ the idle probe's p50 E2EL
     */
    public record Probe(int count, Summary ttftMs, Summary e2elMs, Double stallFactor) {}
}
