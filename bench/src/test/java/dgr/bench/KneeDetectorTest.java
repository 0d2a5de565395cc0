package dgr.bench;

import static org.assertj.core.api.Assertions.assertThat;

import dgr.bench.saturation.KneeDetector;
import org.junit.jupiter.api.Test;

class KneeDetectorTest {
    private final KneeDetector rule = new KneeDetector(0.5);

    @Test
    void clearKneeIsFoundWhereThroughputFlattens() {
        int[] c = {1, 2, 4, 8, 16};
        double[] t = {10, 20, 40, 44, 46};
        var r = rule.detect(c, t);
        assertThat(r.status()).isEqualTo("knee");
        assertThat(r.knee()).isEqualTo(4);
        assertThat(r.slope2()).isLessThan(0.5 * r.slope1());
    }

    @Test
    void linearThroughputHasNoKnee() {
        var r = rule.detect(new int[] {1, 2, 4, 8, 16}, new double[] {10, 20, 40, 80, 160});
        assertThat(r.status()).isEqualTo("no_knee");
        assertThat(r.knee()).isNull();
        assertThat(r.reason()).contains("still rising");
    }

    @Test
    void tooFewPointsHaveNoKneeEvenWhenFlat() {
        var r = rule.detect(new int[] {1, 2, 4}, new double[] {10, 20, 20});
        assertThat(r.status()).isEqualTo("no_knee");
        assertThat(r.reason()).contains("too few points");
    }

    @Test
    void throughputThatNeverGrowsSaturatesAtTheFirstLevel() {
        var r = rule.detect(new int[] {1, 2, 4, 8}, new double[] {10, 9.5, 9.8, 9.6});
        assertThat(r.status()).isEqualTo("knee");
        assertThat(r.knee()).isEqualTo(1);
    }

    @Test
    void saturatingCurveKneeFollowsTheSlopeRatio() {
        // T(c) = 100 c / (c + 4): halves its marginal gain around c = 4.
        int[] c = {1, 2, 4, 8, 16};
        double[] t = new double[c.length];
        for (int i = 0; i < c.length; i++) t[i] = 100.0 * c[i] / (c[i] + 4);
        assertThat(rule.detect(c, t).knee()).isEqualTo(4);
        assertThat(new KneeDetector(0.05).detect(c, t).status()).isEqualTo("no_knee");
    }
}
