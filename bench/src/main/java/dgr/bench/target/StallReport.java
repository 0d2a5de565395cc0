package dgr.bench.target;

/**
 * Starvation seen in the scheduler's iteration events (DESIGN.md contract 4).
 *
 * @param longestDecodeStallIterations most consecutive iterations a running decode session had no row
 * @param longestDecodeStallMs         the same stall in wall time
 * @param longestPrefillWaitIterations most consecutive iterations an admitted session in prefill had no chunk
 * @param longestPrefillWaitMs         the same wait in wall time
 * @param decodeSessionsSeen           sessions that reached decode during the level
 * @param prefillSessionsSeen          sessions admitted during the level
 * @param decodeServiceRates           per session: decode rows received ÷ iterations it was decodable
 */
public record StallReport(int longestDecodeStallIterations, double longestDecodeStallMs,
                          int longestPrefillWaitIterations, double longestPrefillWaitMs, int decodeSessionsSeen,
                          int prefillSessionsSeen, double[] decodeServiceRates) {}
