package dgr.node.stage;

import static org.assertj.core.api.Assertions.assertThat;

import dgr.node.tracker.StageDirectory.OfferedStage;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Which stages a tracker offers may take a hop: the exact span, the same model, schema, engine and state layout. */
class AlternateMatchTest {
    static final AlternateMatch MATCH = new AlternateMatch("R", 1, 6, "llama-64xf32-v1", "java-simd/3");

    static OfferedStage offer(String address, int first, int end) {
        return offer(address, first, end, "R", "llama-64xf32-v1", "kv-" + (end - first), "java-simd/3");
    }

    static OfferedStage offer(String address, int first, int end, String recipe, String schema, String layout, String engine) {
        return new OfferedStage(address, address, first, end, recipe, schema, layout, engine, 4);
    }

    @Test
    void onAThreeStageRouteTheMiddleHopsSpanComesFromItsNamedStageAndTheLastHopChainsFromIt() {
        RouteSpec route = RouteSpec.parse("a:1,z:1");
        List<String> refused = new ArrayList<>();
        var hops = MATCH.alternates(route, List.of(offer("a:1", 1, 3), offer("b:1", 1, 3), offer("c:1", 3, 6), offer("d:1", 1, 4),
                offer("e:1", 2, 6), offer("f:1", 1, 3, "OTHER", "llama-64xf32-v1", "kv-2", "java-simd/3")), refused::add);
        assertThat(hops.get(0)).as("hop 1 [1,3): not the named a, not d [1,4), not f of another model").containsExactly("b:1");
        assertThat(hops.get(1)).as("hop 2 [3,6), chained from hop 1's end").containsExactly("c:1");
    }

    @Test
    void aHopWhoseSpanIsUnknownGetsNoAlternates() {
        // Neither named stage reported: hop 1 starts at 1 and hop 2 ends at 6, but where they meet is unknown.
        var hops = MATCH.alternates(RouteSpec.parse("a:1,z:1"), List.of(offer("b:1", 1, 3), offer("c:1", 3, 6)), w -> {});
        assertThat(hops).containsExactly(List.of(), List.of());
    }

    @Test
    void aStageOfTheRightSpanWithAnotherSchemaEngineOrStateLayoutIsRefusedByName() {
        RouteSpec route = RouteSpec.parse("a:1");
        List<String> refused = new ArrayList<>();
        var hops = MATCH.alternates(route, List.of(offer("a:1", 1, 6, "R", "llama-64xf32-v1", "kv-5", "java-simd/3"),
                offer("s:1", 1, 6, "R", "llama-32xf32-v1", "kv-5", "java-simd/3"),
                offer("e:1", 1, 6, "R", "llama-64xf32-v1", "kv-5", "java-scalar/3"),
                offer("l:1", 1, 6, "R", "llama-64xf32-v1", "kv-q8", "java-simd/3"),
                offer("ok:1", 1, 6, "R", "llama-64xf32-v1", "kv-5", "java-simd/3")), refused::add);
        assertThat(hops.getFirst()).containsExactly("ok:1");
        assertThat(refused).anySatisfy(r -> assertThat(r).contains("s:1", "boundary schema llama-32xf32-v1", "llama-64xf32-v1"))
                .anySatisfy(r -> assertThat(r).contains("e:1", "engine java-scalar/3"))
                .anySatisfy(r -> assertThat(r).contains("l:1", "state layout kv-q8", "kv-5"));
    }

    @Test
    void theRoutesOwnAlternatesAreNotOfferedAgainAndTheTrackersOrderIsKept() {
        var hops = MATCH.alternates(RouteSpec.parse("a:1|b:1"), List.of(offer("c:1", 1, 6), offer("b:1", 1, 6), offer("d:1", 1, 6)), w -> {});
        assertThat(hops.getFirst()).containsExactly("c:1", "d:1");
    }
}
