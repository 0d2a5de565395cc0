package dgr.bench.target;

import dgr.bench.metrics.Summary;
import java.util.List;

/**
 * The server side of one level: what the scheduler's iteration events (in-process) or the server's
 * {@code /metrics} (HTTP) told. Null fields are unavailable, and {@code source} says where the rest
 * came from.
 *
 * @param source              {@code scheduler events}, {@code server /metrics} or {@code unavailable}
 * @param iterations          iteration samples (in-process), else empty
 * @param meanRowsPerIteration mean sessions per batch
 * @param occupancy           mean rows per iteration ÷ row limit
 * @param prefillRowShare     prefill rows ÷ all rows
 * @param decodeRowShare      decode rows ÷ all rows
 * @param queueTimeMs         server-side queue time (submission to admission)
 * @param queueTimeNote       how queue time was obtained (e.g. estimated from histogram buckets)
 * @param stateBytesInUseMean mean state bytes in use over iterations (or at scrape time)
 * @param stateBytesInUseMax  largest state bytes in use
 * @param stateBudgetBytes    the state budget
 * @param serverRssBytes      the serving process's RSS when the server exports it (HTTP), else null
 * @param stalls              decode stalls and prefill waits from iteration events, or null
 * @param pipelineBubble      a route's head (HTTP): each stage's fraction of the level it waited
 *                            ("head", and each later stage by its span "A-B"), else null
 */
public record ServerObservation(String source, List<IterationSample> iterations, Double meanRowsPerIteration,
                                Double occupancy, Double prefillRowShare, Double decodeRowShare, Summary queueTimeMs,
                                String queueTimeNote, Double stateBytesInUseMean, Long stateBytesInUseMax,
                                Long stateBudgetBytes, Long serverRssBytes, StallReport stalls,
                                java.util.Map<String, Double> pipelineBubble) {

    public ServerObservation(String source, List<IterationSample> iterations, Double meanRowsPerIteration,
                             Double occupancy, Double prefillRowShare, Double decodeRowShare, Summary queueTimeMs,
                             String queueTimeNote, Double stateBytesInUseMean, Long stateBytesInUseMax,
                             Long stateBudgetBytes, Long serverRssBytes, StallReport stalls) {
        this(source, iterations, meanRowsPerIteration, occupancy, prefillRowShare, decodeRowShare, queueTimeMs, queueTimeNote,
                stateBytesInUseMean, stateBytesInUseMax, stateBudgetBytes, serverRssBytes, stalls, null);
    }

    public static ServerObservation unavailable() {
        return new ServerObservation("unavailable", List.of(), null, null, null, null, null, "unavailable", null, null,
                null, null, null);
    }
}
