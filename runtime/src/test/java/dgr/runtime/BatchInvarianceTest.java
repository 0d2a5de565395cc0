package dgr.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** DESIGN.md contract 1 through the scheduler: a session's logits and tokens do not depend on its neighbours. */
class BatchInvarianceTest {
    static Stream<Arguments> cases() {
        List<Arguments> out = new ArrayList<>();
        for (int sessions : new int[] {1, 2, 4, 8, 16}) {
            for (SchedulingPolicy policy : SchedulingPolicy.values()) {
                for (int chunk : new int[] {1, 7, 64}) out.add(Arguments.of(sessions, policy, chunk));
            }
        }
        return out.stream();
    }

    @ParameterizedTest(name = "{0} sessions, {1}, chunk {2}")
    @MethodSource("cases")
    void everySessionsTokensAndLogitsAreBitIdenticalToItsSoloRun(int n, SchedulingPolicy policy, int chunk)
            throws Exception {
        boolean mixed = policy == SchedulingPolicy.MIXED;
        SplittableRandom rnd = new SplittableRandom(1000L * n + chunk + (mixed ? 7 : 0));
        int[][] prompts = new int[n][];
        int[] maxTokens = new int[n];
        for (int i = 0; i < n; i++) {
            prompts[i] = Runs.prompt(rnd, 1 + rnd.nextInt(90), 64);
            maxTokens[i] = 1 + rnd.nextInt(40);
        }
        SchedulerConfig config = SchedulerConfig.defaults().withPolicy(policy).withBatch(8, 64).withMaxPrefillChunk(chunk);
        SchedulerConfig soloConfig = SchedulerConfig.defaults().withBatch(8, 256).withMaxPrefillChunk(256);

        FakeEngine engine = FakeEngine.standard(mixed);
        EventLog log = new EventLog();
        List<Session> sessions = new ArrayList<>();
        List<Recorder> recorders = new ArrayList<>();
        try (Scheduler scheduler = new Scheduler(engine, config)) {
            scheduler.addListener(log);
            // All submitted before the loop starts, so they really run together.
            for (int i = 0; i < n; i++) {
                Recorder r = new Recorder();
                recorders.add(r);
                sessions.add(Runs.accepted(scheduler.submit(
                        SessionRequest.of("t" + (i % 3), prompts[i], maxTokens[i]).withSampler(r))));
            }
            scheduler.start();
            for (Session s : sessions) s.completion().get();
        }
        for (int i = 0; i < n; i++) {
            Runs.Solo solo = Runs.solo(() -> FakeEngine.standard(mixed), soloConfig, prompts[i], maxTokens[i]);
            assertThat(recorders.get(i).tokens).as("tokens of session %d", i).isEqualTo(solo.recorder().tokens);
            assertThat(recorders.get(i).logits).as("logits of session %d", i).hasSameSizeAs(solo.recorder().logits);
            for (int k = 0; k < solo.recorder().logits.size(); k++) {
                assertThat(recorders.get(i).logits.get(k)).as("logits %d of session %d", k, i)
                        .isEqualTo(solo.recorder().logits.get(k));
            }
            assertThat(sessions.get(i).completion().get().reason()).isEqualTo(FinishReason.LENGTH);
            assertThat(sessions.get(i).phase()).isEqualTo(Phase.FINISHED);
        }
        assertThat(engine.openSlots()).isZero();
        if (n > 1 && chunk < 64) {
            // The test means something only if sessions really shared batches.
            assertThat(log.iterations()).anySatisfy(e -> assertThat(e.sessions()).isGreaterThan(1));
        }
    }
}
