package dgr.node.stage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** {@code --route-depth}: a head's choice, at least 1, one micro-batch per stage when not given; {@code --stage-advertise}. */
class StagePlanTest {
    private static final String TOKEN = "plan-test-token";
    private static final Duration GRACE = Duration.ofSeconds(10), FLOOR = Duration.ofMillis(250);

    @Test
    void aHeadKeepsOneMicroBatchPerStageUnlessRouteDepthIsGiven() {
        assertThat(StagePlan.of("0:4", "127.0.0.1:9001,127.0.0.1:9002", null, TOKEN, GRACE, FLOOR).routeDepth()).isZero();
        assertThat(StagePlan.of("0:4", "127.0.0.1:9001,127.0.0.1:9002", null, TOKEN, GRACE, FLOOR, 1).routeDepth()).isEqualTo(1);
    }

    @Test
    void aRouteDepthBelowOneOrOnALaterStageIsRefusedNamingTheFlag() {
        assertThatThrownBy(() -> StagePlan.of("0:4", "127.0.0.1:9001", null, TOKEN, GRACE, FLOOR, 0))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("--route-depth must be at least 1, got 0");
        assertThatThrownBy(() -> StagePlan.of("4:8", null, 9001, TOKEN, GRACE, FLOOR, 2))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("--route-depth belongs to the head");
    }

    @Test
    void aLaterStageIsDialledAtItsAdvertisedAddressElseItsBoundOneAndAWildcardBindNamesNone() {
        StagePlan stage = StagePlan.of("4:8", null, 0, TOKEN, GRACE, FLOOR);
        assertThat(stage.dialAddress("127.0.0.1", 41000)).isEqualTo("127.0.0.1:41000");
        assertThat(stage.dialAddress("0.0.0.0", 41000)).as("0.0.0.0 names no machine").isNull();
        assertThat(stage.withAdvertise("10.0.0.7").dialAddress("0.0.0.0", 41000)).as("host only: the bound port").isEqualTo("10.0.0.7:41000");
        assertThat(stage.withAdvertise("gw.example:9100").dialAddress("0.0.0.0", 41000)).isEqualTo("gw.example:9100");
        assertThatThrownBy(() -> stage.withAdvertise("10.0.0.7:http")).hasMessageContaining("port 'http' is not a number");
        assertThatThrownBy(() -> stage.withAdvertise("10.0.0.7:70000")).hasMessageContaining("port in 1..65535");
        assertThatThrownBy(() -> StagePlan.of("0:4", "127.0.0.1:9001", null, TOKEN, GRACE, FLOOR).withAdvertise("h:1"))
                .hasMessageContaining("--stage-advertise is a later stage's address");
    }
}
