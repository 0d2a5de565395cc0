package dgr.bench.target;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.data.Offset.offset;

import org.junit.jupiter.api.Test;

/** The bubble of a route's stages over a level, from a head's /metrics scraped before and after it. */
class PipelineBubbleTest {
    static String head(double wait, double clock, double busyA, double clockA, double busyB, double clockB) {
        return "# TYPE dgr_route_wait_seconds counter\ndgr_route_wait_seconds_total " + wait + "\n"
                + "dgr_route_clock_seconds_total " + clock + "\n"
                + "dgr_route_stage_busy_seconds_total{span=\"4-8\"} " + busyA + "\n"
                + "dgr_route_stage_clock_seconds_total{span=\"4-8\"} " + clockA + "\n"
                + "dgr_route_stage_busy_seconds_total{span=\"8-16\"} " + busyB + "\n"
                + "dgr_route_stage_clock_seconds_total{span=\"8-16\"} " + clockB + "\n";
    }

    @Test
    void eachStagesBubbleIsItsWaitingShareOfTheLevelNotOfItsLifetime() {
        var before = PrometheusText.parse(head(100, 200, 50, 190, 20, 180));
        // 10 s later: the head waited 2.5 s of them, span 4-8 computed 6 s, span 8-16 computed 9 s.
        var after = PrometheusText.parse(head(102.5, 210, 56, 200, 29, 190));
        var bubble = PipelineBubble.between(before, after);
        assertThat(bubble).containsOnlyKeys("head", "4-8", "8-16");
        assertThat(bubble.get("head")).isCloseTo(0.25, offset(1e-9));
        assertThat(bubble.get("4-8")).isCloseTo(0.4, offset(1e-9));
        assertThat(bubble.get("8-16")).isCloseTo(0.1, offset(1e-9));
    }

    @Test
    void aServerThatIsNoRoutesHeadHasNoBubbleAndASpanSeenOnlyAfterTheLevelBeganIsLeftOut() {
        assertThat(PipelineBubble.between(PrometheusText.parse("dgr_batch_occupancy 0.5\n"),
                PrometheusText.parse("dgr_batch_occupancy 0.7\n"))).isNull();
        var before = PrometheusText.parse("dgr_route_wait_seconds_total 1\ndgr_route_clock_seconds_total 10\n");
        var after = PrometheusText.parse(head(2, 20, 5, 10, 1, 10));
        assertThat(PipelineBubble.between(before, after)).containsOnlyKeys("head");
    }
}
