package dgr.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import dgr.runtime.SchedulerEvent.IterationEvent;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * DESIGN.md contract 3 on the rows themselves: two engines (one splitting prefill from decode, one
 * mixing them) and two recipes side by side; every batch an engine received held one key. The same
 * contract with real engines, both architectures and two recipes in one node:
 * node's TwoArchitecturesInOneNodeTest.
 */
class CompatibilityTest {

    @Test
    void twoEnginesWithTwoRecipesNeverShareABatchAndEachBatchHoldsOneKey() throws Exception {
        // A split engine (prefill and decode are different keys) and a mixed one, different recipes.
        FakeEngine split = new FakeEngine("java-simd", false, 64, 64, 512, 100, "recipe-a");
        FakeEngine mixed = new FakeEngine("java-scalar", true, 64, 64, 512, 120, "recipe-b");
        assertThat(split.recipe().id()).isNotEqualTo(mixed.recipe().id());
        SchedulerConfig config = SchedulerConfig.defaults().withBatch(4, 16).withMaxPrefillChunk(5)
                .withPolicy(SchedulingPolicy.MIXED);
        EventLog shared = new EventLog();
        Map<Scheduler, EventLog> own = new HashMap<>();
        Map<Scheduler, Map<Long, Integer>> promptLengths = new HashMap<>();
        List<Session> all = new ArrayList<>();
        SplittableRandom rnd = new SplittableRandom(42);
        try (Scheduler a = new Scheduler(split, config.withStateBudgetBytes(40_000));
             Scheduler b = new Scheduler(mixed, config.withStateBudgetBytes(60_000))) {
            for (Scheduler s : List.of(a, b)) {
                EventLog log = new EventLog();
                own.put(s, log);
                s.addListener(log);
                s.addListener(shared);
                promptLengths.put(s, new HashMap<>());
                for (int i = 0; i < 10; i++) {
                    int[] prompt = Runs.prompt(rnd, 1 + rnd.nextInt(30), 64);
                    Session session = Runs.accepted(s.submit(SessionRequest.of("t" + i % 2, prompt, 1 + rnd.nextInt(20))));
                    promptLengths.get(s).put(session.sequenceId(), prompt.length);
                    all.add(session);
                }
            }
            a.start();
            b.start();
            for (Session s : all) s.completion().get();
            assertThat(a.stateBytesInUse()).isZero();
            assertThat(b.reservedBytes()).isZero();
        }
        KeyCheck.oneKeyPerBatch(split, own.get(findScheduler(own, split)), promptLengths.get(findScheduler(own, split)));
        KeyCheck.oneKeyPerBatch(mixed, own.get(findScheduler(own, mixed)), promptLengths.get(findScheduler(own, mixed)));

        var keys = shared.iterations().stream().map(IterationEvent::key).distinct().toList();
        assertThat(keys).extracting(CompatibilityKey::phaseClass)
                .containsExactlyInAnyOrder(PhaseClass.PREFILL, PhaseClass.DECODE, PhaseClass.MIXED);
        assertThat(keys).extracting(CompatibilityKey::recipeId).containsOnly(split.recipe().id(), mixed.recipe().id());
        // The mixed path really mixed: some batch held a prefill chunk and decode rows together.
        assertThat(own.get(findScheduler(own, mixed)).iterations())
                .anySatisfy(e -> assertThat(e.prefillChunks() > 0 && e.decodeRows() > 0).isTrue());
        assertThat(split.openSlots()).isZero();
        assertThat(mixed.openSlots()).isZero();
    }

    private static Scheduler findScheduler(Map<Scheduler, EventLog> own, FakeEngine e) {
        return own.keySet().stream().filter(s -> s.engine() == e).findFirst().orElseThrow();
    }
}
