package dgr.bench.saturation;

import dgr.bench.metrics.LevelMetrics;
import dgr.bench.metrics.Slo;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;

/**
 * Whether a closed-loop sweep has said enough, and if not, which concurrency to measure next. It
 * goes on (doubling to 8, then by halves: 12, 16, 24, 32 ...) until one of: a knee with a level
 * beyond it to confirm the flattening, the row limit (more clients only queue), a level missing the
 * SLO (more sessions only hurt latency further), or the time budget.
 */
public final class SweepPlan {
    /** The highest concurrency an extending sweep tries when the target reports no row limit. */
    public static final int MAX_LEVEL = 64;

    public sealed interface Step {}

    public record Next(int concurrency) implements Step {}

    /** @param reason why the sweep ends, in words for the report */
    public record Done(String reason) implements Step {}

    private final KneeDetector knee;
    private final Slo slo;
    private final int rowLimit;
    private final Duration budget;

    /** @param rowLimit the target's running-session limit, or &lt;= 0 when unknown */
    public SweepPlan(KneeDetector knee, Slo slo, int rowLimit, Duration budget) {
        this.knee = knee;
        this.slo = slo;
        this.rowLimit = rowLimit;
        this.budget = budget;
    }

    /** @param spent time the sweep's levels have taken so far */
    public Step next(List<LevelMetrics> levels, Duration spent) {
        List<LevelMetrics> closed = levels.stream().filter(l -> l.mode().equals("closed"))
                .sorted(Comparator.comparingInt(LevelMetrics::concurrency)).toList();
        if (closed.isEmpty()) return new Done("no closed-loop level");
        LevelMetrics last = closed.getLast();
        int c = last.concurrency();
        if (slo.isSet() && !(last.completed() > 0 && slo.met(last.ttftMs(), last.itlMs()))) {
            return new Done("level " + c + " missed the latency SLO: more sessions would only wait longer");
        }
        int[] x = closed.stream().mapToInt(LevelMetrics::concurrency).toArray();
        double[] y = closed.stream().mapToDouble(LevelMetrics::outputThroughput).toArray();
        KneeDetector.Result k = knee.detect(x, y);
        if (k.knee() != null && k.knee() < c) return new Done("knee at " + k.knee() + " (" + k.reason() + ")");
        int limit = rowLimit > 0 ? rowLimit : MAX_LEVEL;
        if (c >= limit) {
            return new Done(rowLimit > 0 ? "reached the row limit " + rowLimit + ": more clients would only queue"
                    : "reached " + MAX_LEVEL + " clients, the most this sweep tries");
        }
        // The next level takes about as long as the last one (same request count, flatter throughput).
        if (spent.plus(last.durationS() > 0 ? Duration.ofMillis((long) (last.durationS() * 1000)) : Duration.ZERO)
                .compareTo(budget) > 0) {
            return new Done("the sweep's time budget of " + budget.toSeconds() + " s would be exceeded");
        }
        return new Next(Math.min(limit, c < 8 ? c * 2 : c + c / 2));
    }
}
