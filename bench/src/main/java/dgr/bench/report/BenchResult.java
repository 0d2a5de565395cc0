package dgr.bench.report;

import java.util.List;
import java.util.Map;

/** The whole run: what bench-result.json holds, and what the reports are made from. */
public record BenchResult(Environment environment, Map<String, Object> config, List<RunResult> runs,
                          List<LaneStatus> lanes) {
    public long failedChecks() { return runs.stream().mapToLong(RunResult::failedChecks).sum(); }
}
