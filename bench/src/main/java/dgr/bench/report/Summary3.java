package dgr.bench.report;

import dgr.bench.metrics.LevelMetrics;
import dgr.bench.saturation.Recommendation;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * The three lines a report opens with, per measured model: what was measured, what is recommended,
 * and how to apply it. Everything else in the report explains these.
 */
final class Summary3 {
    private Summary3() {}

    static List<String> lines(RunResult run, Path out) {
        var t = run.target();
        List<LevelMetrics> closed = run.levels().stream().filter(l -> l.mode().equals("closed")).toList();
        String levels = closed.stream().map(l -> Integer.toString(l.concurrency())).collect(Collectors.joining(", "));
        String measured = "**Measured:** " + t.modelName() + " (" + t.lane() + " lane, " + t.kind() + ")"
                + (closed.isEmpty() ? ", open-loop levels only"
                : String.format(Locale.ROOT, ", closed loop at %s clients: output %.0f → %.0f tok/s", levels,
                        closed.getFirst().outputThroughput(), closed.stream().mapToDouble(LevelMetrics::outputThroughput).max().orElse(0)))
                + (run.sweepEnd() == null ? "." : "; the sweep ended: " + run.sweepEnd() + ".");
        Recommendation r = run.recommendation();
        if (r == null) {
            return List.of(measured, "**Recommendation:** none (no closed-loop levels).", "**Apply:** nothing to apply.");
        }
        String why = r.kneeConcurrency() != null ? r.recommendationBasis()
                : r.recommendationBasis() + "; knee rule: " + r.kneeRule().reason();
        String recommended = String.format(Locale.ROOT, "**Recommendation:** at most %d concurrent session%s, about %.0f tok/s "
                + "(%s).", r.recommendedMaxConcurrency(), r.recommendedMaxConcurrency() == 1 ? "" : "s",
                r.expectedOutputThroughput(), why);
        String model = t.kind().equals("in-process") ? t.endpoint() : "MODEL.gguf";
        String apply = "**Apply:** `dgr serve -m " + model + " --saturation " + out.resolve("saturation.json")
                + "` (the node matches it by artifact and recipe), or `dgr serve -np " + r.recommendedMaxConcurrency() + "`.";
        return List.of(measured, recommended, apply);
    }
}
