package dgr.node.stage;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The stage transport's warm-up ({@link WireWarmUp}) completes its round trips, prefill-sized ones among them. */
class WireWarmUpTest {
    @Test
    void everyRoundTripOfTheWarmUpIsAnsweredThroughTheTokenCheckedEcho() {
        long nanos = WireWarmUp.run(ClusterToken.of(StageFixture.TOKEN), 64, 120);
        assertThat(nanos).as("-1 means a round trip went unanswered or the echo stream broke").isPositive();
    }

    @Test
    void noRoundsMeansNoWarmUp() {
        assertThat(WireWarmUp.run(ClusterToken.of(StageFixture.TOKEN), 64, 0)).isZero();
    }
}
