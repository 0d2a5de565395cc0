package dgr.bench;

import static org.assertj.core.api.Assertions.assertThat;

import dgr.bench.metrics.LevelMetrics;
import dgr.bench.metrics.Slo;
import dgr.bench.metrics.Summary;
import dgr.bench.saturation.KneeDetector;
import dgr.bench.saturation.Recommendation;
import dgr.bench.saturation.SaturationAnalysis;
import dgr.bench.saturation.SweepPlan;
import dgr.bench.target.TargetInfo;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Issue 27, item 3: the sweep extends itself until a knee, the row limit or the SLO, and the
 * recommendation never holds a node below a level measured sustainable.
 */
class SweepAndRecommendationTest {
    static final Slo SLO = new Slo(2000.0, 200.0);
    static final KneeDetector KNEE = new KneeDetector(0.5);

    /** A closed level of {@code c} clients with this throughput and p95 ITL. */
    static LevelMetrics level(int c, double tokensPerS, double itlP95) {
        Summary ttft = new Summary(10, 100, 50, 100, 200, 250, 300);
        Summary itl = new Summary(10, itlP95 / 2, 1, itlP95 / 2, itlP95, itlP95, itlP95);
        return new LevelMetrics("c" + c, "closed", c, 0, 16, 0, 10, 100, (long) (tokensPerS * 10), 1.6, null, tokensPerS,
                tokensPerS, tokensPerS / c, ttft, null, itl, null, null, null, null, null, null, null, null, null);
    }

    static List<LevelMetrics> levels(int[] c, double[] tput, double[] itl) {
        List<LevelMetrics> out = new ArrayList<>();
        for (int i = 0; i < c.length; i++) out.add(level(c[i], tput[i], itl[i]));
        return out;
    }

    static TargetInfo info(int rowLimit) {
        return new TargetInfo("in-process", "m.gguf", "m", "llama", "dense", "r", "sha", "java-q8/1", 1000, 512,
                rowLimit, 0, 0, 1, 2, 1, 4, true, null);
    }

    @Test
    void stillRisingAtEightAsksForTwelve() {
        SweepPlan plan = new SweepPlan(KNEE, SLO, 16, Duration.ofSeconds(100));
        var step = plan.next(levels(new int[] {1, 2, 4, 8}, new double[] {10, 20, 40, 80}, new double[] {50, 50, 50, 50}),
                Duration.ofSeconds(10));
        assertThat(step).isEqualTo(new SweepPlan.Next(12));
    }

    @Test
    void aKneeWithALevelBeyondItEndsTheSweep() {
        SweepPlan plan = new SweepPlan(KNEE, SLO, 16, Duration.ofSeconds(100));
        var step = plan.next(levels(new int[] {1, 2, 4, 8, 12}, new double[] {10, 20, 40, 44, 45},
                new double[] {50, 50, 50, 60, 70}), Duration.ofSeconds(10));
        assertThat(step).isInstanceOf(SweepPlan.Done.class);
        assertThat(((SweepPlan.Done) step).reason()).startsWith("knee at 4");
    }

    @Test
    void theRowLimitTheSloAndTheBudgetEachEndTheSweep() {
        int[] c = {1, 2, 4, 8, 12, 16};
        double[] rising = {10, 20, 40, 80, 120, 160};
        double[] fast = {50, 50, 50, 50, 50, 50};
        assertThat(new SweepPlan(KNEE, SLO, 16, Duration.ofSeconds(100)).next(levels(c, rising, fast), Duration.ZERO))
                .isEqualTo(new SweepPlan.Done("reached the row limit 16: more clients would only queue"));
        var slow = levels(new int[] {1, 2, 4, 8}, new double[] {10, 20, 40, 80}, new double[] {50, 50, 50, 900});
        assertThat(((SweepPlan.Done) new SweepPlan(KNEE, SLO, 16, Duration.ofSeconds(100)).next(slow, Duration.ZERO)).reason())
                .startsWith("level 8 missed the latency SLO");
        var fine = levels(new int[] {1, 2, 4, 8}, new double[] {10, 20, 40, 80}, new double[] {50, 50, 50, 50});
        assertThat(((SweepPlan.Done) new SweepPlan(KNEE, SLO, 16, Duration.ofSeconds(30)).next(fine, Duration.ofSeconds(25)))
                .reason()).contains("time budget");
    }

    @Test
    void withoutAKneeTheRecommendationIsTheLargestSustainableLevelNotAFractionOfIt() {
        // The old rule: 0.8 × 8 = 6, below the 8 sessions the node was measured to sustain.
        var sweep = levels(new int[] {1, 2, 4, 8}, new double[] {10, 20, 40, 80}, new double[] {50, 50, 50, 50});
        Recommendation r = new SaturationAnalysis(KNEE, 0.8, SLO).analyze(info(16), sweep, 100, "t", null);
        assertThat(r.kneeStatus()).isEqualTo("no_knee");
        assertThat(r.recommendedMaxConcurrency()).isEqualTo(8);
        assertThat(r.recommendationBasis()).contains("raised to 8");
    }

    @Test
    void aKneeIsRecommendedAsMeasuredAndTheSloStillCaps() {
        var knee = levels(new int[] {1, 2, 4, 8, 12}, new double[] {10, 20, 40, 44, 45}, new double[] {50, 50, 50, 60, 70});
        assertThat(new SaturationAnalysis(KNEE, 1.0, SLO).analyze(info(16), knee, 100, "t", null).recommendedMaxConcurrency())
                .isEqualTo(4);
        var slowAtFour = levels(new int[] {1, 2, 4, 8, 12}, new double[] {10, 20, 40, 44, 45}, new double[] {50, 50, 900, 900, 900});
        assertThat(new SaturationAnalysis(KNEE, 1.0, SLO).analyze(info(16), slowAtFour, 100, "t", null).recommendedMaxConcurrency())
                .isEqualTo(2);
    }
}
