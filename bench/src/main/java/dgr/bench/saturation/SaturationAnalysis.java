package dgr.bench.saturation;

import dgr.bench.metrics.LevelMetrics;
import dgr.bench.metrics.Slo;
import dgr.bench.target.TargetInfo;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * From a closed-loop sweep to a recommendation: knee by {@link KneeDetector}, the largest tested
 * concurrency meeting the SLO, and {@code factor} × saturation (the knee, or the largest level
 * tested when there is none) capped by that SLO bound, but never below the largest level that was
 * measured sustainable (SLO met) up to saturation.
 */
public final class SaturationAnalysis {
    private final KneeDetector knee;
    private final double factor;
    private final Slo slo;

    public SaturationAnalysis(KneeDetector knee, double factor, Slo slo) {
        if (!(factor > 0 && factor <= 1)) throw new IllegalArgumentException("recommendation factor must be in (0, 1]");
        this.knee = knee;
        this.factor = factor;
        this.slo = slo;
    }

    /**
     * @param levels          closed-loop levels of one recipe and lane
     * @param meanSessionTokens mean prompt + max tokens of the workload (what one session reserves)
     */
    public Recommendation analyze(TargetInfo info, List<LevelMetrics> levels, double meanSessionTokens,
                                  String measuredAt, Recommendation.Machine machine) {
        List<LevelMetrics> sorted = new ArrayList<>(levels.stream().filter(l -> l.mode().equals("closed")).toList());
        sorted.sort(Comparator.comparingInt(LevelMetrics::concurrency));
        if (sorted.isEmpty()) throw new IllegalArgumentException("no closed-loop levels to analyse");
        int[] x = sorted.stream().mapToInt(LevelMetrics::concurrency).toArray();
        double[] y = sorted.stream().mapToDouble(LevelMetrics::outputThroughput).toArray();
        double[] perSession = sorted.stream().mapToDouble(LevelMetrics::perSessionOutputThroughput).toArray();
        KneeDetector.Result k = knee.detect(x, y);

        Integer sloBound = null;
        if (slo.isSet()) {
            for (LevelMetrics l : sorted) if (l.completed() > 0 && slo.met(l.ttftMs(), l.itlMs())) sloBound = l.concurrency();
        }
        int saturation = k.knee() != null ? k.knee() : x[x.length - 1];
        // Sustainable: the largest level measured up to saturation that met the SLO (every level when none is set).
        Integer sustainable = null;
        for (LevelMetrics l : sorted) {
            if (l.concurrency() <= saturation && l.completed() > 0 && (!slo.isSet() || slo.met(l.ttftMs(), l.itlMs()))) {
                sustainable = l.concurrency();
            }
        }
        int rec = Math.max(1, (int) Math.floor(factor * saturation));
        String basis = (factor == 1.0 ? "" : String.format("%.2f × ", factor)) + (k.knee() != null
                ? "knee " + k.knee()
                : "largest tested " + saturation + " (no knee: saturation not reached up to there, so this is a lower bound)");
        if (slo.isSet() && sloBound != null && sloBound < rec) {
            rec = sloBound;
            basis += "; capped by the SLO bound " + sloBound;
        }
        if (sustainable == null) {
            rec = 1;
            basis += "; no tested level met the SLO, so the floor of 1 session";
        } else if (rec < sustainable) {
            // A node applying the recommendation must never be held below what it was measured to sustain.
            rec = sustainable;
            basis += "; raised to " + sustainable + ", the largest level measured sustainable (SLO met) up to saturation";
        }
        Long perToken = info.stateBytesPerToken() > 0 ? info.stateBytesPerToken() : null;
        Long budget = info.stateBudgetBytes() > 0 ? info.stateBudgetBytes() : null;
        Integer fit = perToken == null || budget == null ? null
                : (int) Math.min(Integer.MAX_VALUE, budget / Math.max(1, Math.round(perToken * meanSessionTokens)));
        List<Integer> tested = new ArrayList<>();
        for (int c : x) tested.add(c);
        List<Double> tputs = new ArrayList<>();
        for (double v : y) tputs.add(v);
        return new Recommendation(info.recipeId(), info.lane(), info.architecture(), info.artifactSha256(),
                info.modelName(), info.engine(), info.kind() + " " + info.endpoint(), tested, tputs, k.knee(),
                k.status(), new Recommendation.KneeRule("two_segment", knee.slopeRatio(), KneeDetector.MIN_POINTS,
                        k.slope1(), k.slope2(), k.reason()),
                sloBound, new Recommendation.SloUsed(slo.ttftP95Ms(), slo.itlP95Ms()), rec, basis, factor,
                interpolate(x, y, rec), interpolate(x, perSession, rec), perToken,
                perToken == null ? null : info.stateBytesBasis(), budget, fit, measuredAt, machine);
    }

    /** Linear interpolation at {@code c}, clamped to the tested range. */
    static double interpolate(int[] x, double[] y, int c) {
        if (c <= x[0]) return y[0];
        for (int i = 1; i < x.length; i++) {
            if (c <= x[i]) return y[i - 1] + (y[i] - y[i - 1]) * (c - x[i - 1]) / (double) (x[i] - x[i - 1]);
        }
        return y[y.length - 1];
    }
}
