package dgr.tracker.registry;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The registry offers the live later stages of a recipe's span, most headroom first, and never a lapsed one. */
class StageRegistryTest {
    static StageSpan span(String address, int first, int end, int sessions) {
        return new StageSpan("R", first, end, 6, "llama-64xf32-v1", "kv", "java-simd/3", address, sessions, 16);
    }

    static void report(NodeRegistry reg, String id, StageSpan s) {
        reg.report(id, Backend.DGR, URI.create("http://127.0.0.1:1/" + id + "/"), "t", Map.of(), s);
    }

    @Test
    void stagesOfASpanComeMostHeadroomFirstAndOnlyOfThatRecipeAndSpan() {
        NodeRegistry reg = new NodeRegistry(Duration.ofSeconds(3), Clock.systemUTC());
        report(reg, "busy", span("h:1", 1, 6, 12));
        report(reg, "idle", span("h:2", 1, 6, 0));
        report(reg, "half", span("h:3", 1, 6, 8));
        report(reg, "other-span", span("h:4", 2, 6, 0));
        reg.report("other-model", Backend.DGR, URI.create("http://127.0.0.1:1/o/"), "t", Map.of(),
                new StageSpan("Q", 1, 6, 6, "llama-64xf32-v1", "kv", "java-simd/3", "h:5", 0, 16));
        reg.report("whole", Backend.DGR, URI.create("http://127.0.0.1:1/w/"), "t", Map.of());
        assertThat(reg.stages("R", 1, 6)).extracting(RegisteredNode::id).containsExactly("idle", "half", "busy");
        assertThat(reg.stages("R", -1, -1)).extracting(RegisteredNode::id).containsExactly("idle", "half", "busy", "other-span");
        assertThat(reg.stages("Q", 1, 6)).extracting(RegisteredNode::id).containsExactly("other-model");
    }

    @Test
    void aStageWhoseHeartbeatLapsedOrWhoseConnectionBrokeIsNotOffered() {
        NodeRegistry reg = new NodeRegistry(Duration.ofMillis(1), Clock.systemUTC());
        report(reg, "quiet", span("h:1", 1, 6, 0));
        long t0 = System.nanoTime();
        while (System.nanoTime() - t0 < 5_000_000) Thread.onSpinWait(); // past a 1 ms heartbeat timeout, measured
        assertThat(reg.stages("R", 1, 6)).isEmpty();
        NodeRegistry live = new NodeRegistry(Duration.ofSeconds(3), Clock.systemUTC());
        report(live, "broken", span("h:1", 1, 6, 0));
        live.markBroken(live.find("broken").orElseThrow(), "connection refused");
        assertThat(live.stages("R", 1, 6)).isEmpty();
    }
}
