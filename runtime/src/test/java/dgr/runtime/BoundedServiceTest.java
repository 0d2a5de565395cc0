package dgr.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * DESIGN.md contract 4: long prompts keep arriving while 8 sessions decode; no decode session waits
 * more than its bound and every prefill gets a chunk within its bound, counted in iterations.
 */
class BoundedServiceTest {

    @ParameterizedTest(name = "{0} on a {1} engine")
    @CsvSource({"DECODE_FIRST, split", "DECODE_FIRST, mixed", "MIXED, mixed", "MIXED, split"})
    void decodeAndPrefillWaitsStayWithinTheConfiguredBounds(SchedulingPolicy policy, String engineKind) {
        boolean mixedEngine = engineKind.equals("mixed");
        SchedulerConfig config = SchedulerConfig.defaults().withPolicy(policy).withBatch(12, 32).withMaxPrefillChunk(8)
                .withWaitBounds(3, 1);
        FakeEngine engine = new FakeEngine("fake", mixedEngine, 64, 64, 1024, 10, "x");
        EventLog log = new EventLog();
        SplittableRandom rnd = new SplittableRandom(7);
        List<Session> sessions = new ArrayList<>();
        try (Scheduler scheduler = new Scheduler(engine, config)) {
            scheduler.addListener(log);
            for (int i = 0; i < 8; i++) {
                sessions.add(Runs.accepted(scheduler.submit(SessionRequest.of("decoders", Runs.prompt(rnd, 4, 64), 300))));
            }
            int longPrompts = 0;
            for (int it = 0; sessions.stream().anyMatch(s -> !s.completion().isDone()); it++) {
                if (it >= 10 && it % 4 == 0 && longPrompts < 30) {
                    longPrompts++;
                    sessions.add(Runs.accepted(scheduler.submit(
                            SessionRequest.of("long", Runs.prompt(rnd, 100 + rnd.nextInt(200), 64), 2))));
                }
                scheduler.runIteration();
            }
        }
        ServiceGaps gaps = ServiceGaps.of(log);
        System.out.printf("%s on %s engine: max decode wait %d (bound %d), max prefill wait %d (bound %d)%n", policy,
                engineKind, gaps.maxDecodeWait, config.decodeWaitBound(mixedEngine), gaps.maxPrefillWait,
                config.prefillWaitBound(mixedEngine));
        assertThat(gaps.maxDecodeWait).as("decode wait").isLessThanOrEqualTo(config.decodeWaitBound(mixedEngine));
        assertThat(gaps.maxPrefillWait).as("prefill wait").isLessThanOrEqualTo(config.prefillWaitBound(mixedEngine));
        // The bounds were exercised: long prompts were chunked many times while decoders ran.
        assertThat(gaps.prefillServices).isGreaterThan(30 * 12);
        assertThat(log.iterations()).allSatisfy(e -> assertThat(e.sessions()).isLessThanOrEqualTo(12));
        assertThat(log.iterations()).allSatisfy(e -> assertThat(e.tokens()).isLessThanOrEqualTo(32));
        if (!config.mixesOn(mixedEngine)) {
            assertThat(gaps.maxPrefillWait).as("decode-first makes prefills wait").isPositive();
        }
        assertThat(sessions).allSatisfy(s -> assertThat(s.phase()).isEqualTo(Phase.FINISHED));
    }
}
