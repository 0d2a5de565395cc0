package dgr.bench.report;

import dgr.bench.metrics.LevelMetrics;
import dgr.bench.saturation.Recommendation;
import dgr.bench.target.IterationSample;
import dgr.bench.target.RequestRecord;
import dgr.bench.target.TargetInfo;
import java.util.List;
import java.util.Map;

/** Everything measured on one target (one recipe, one lane). */
public record RunResult(TargetInfo target, List<LevelMetrics> levels, Recommendation recommendation,
                        List<RequestRecord> requests, Map<String, List<IterationSample>> iterations,
                        Double idleProbeE2elMs, String sweepEnd) {
    public long failedChecks() {
        return levels.stream().flatMap(l -> l.fairness().checks().stream()).filter(c -> c.failed()).count();
    }
}
