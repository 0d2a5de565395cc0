package dgr.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import dgr.engine.Engine;
import dgr.engine.EngineOptions;
import dgr.engine.Engines;
import dgr.runtime.SchedulerEvent.IterationEvent;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The scheduler over the real llama engine (llama-tiny, Q4_0): every session's tokens and logits are
 * bit-identical to its solo run at 1..16 sessions, both policies, chunks 1, 7 and 64. One engine
 * instance serves all cases, one scheduler at a time (an engine is driven by one loop).
 */
class LlamaTinySchedulerTest {
    static Engine engine;
    static final int SESSIONS = 16;
    static final int[][] PROMPTS = new int[SESSIONS][];
    static final int[] MAX_TOKENS = new int[SESSIONS];
    static final Map<Integer, Recorder> SOLO = new HashMap<>();

    @BeforeAll
    static void load() throws URISyntaxException {
        Path model = Path.of(LlamaTinySchedulerTest.class.getResource("/models/llama-tiny-Q4_0.gguf").toURI());
        engine = Engines.load(model, EngineOptions.defaults().withThreads(2).withMaxRows(64).withContextLength(256));
        SplittableRandom rnd = new SplittableRandom(99);
        int vocab = engine.info().vocabSize();
        for (int i = 0; i < SESSIONS; i++) {
            PROMPTS[i] = Runs.prompt(rnd, 1 + rnd.nextInt(70), vocab);
            MAX_TOKENS[i] = 1 + rnd.nextInt(12);
        }
    }

    @AfterAll
    static void close() {
        if (engine != null) engine.close();
    }

    static Recorder solo(int i) {
        return SOLO.computeIfAbsent(i, k -> {
            try (Scheduler s = new Scheduler(engine, SchedulerConfig.defaults().withBatch(1, 64).withMaxPrefillChunk(64))) {
                Recorder rec = new Recorder();
                Session session = Runs.accepted(s.submit(SessionRequest.of("solo", PROMPTS[k], MAX_TOKENS[k]).withSampler(rec)));
                while (!session.completion().isDone()) s.runIteration();
                return rec;
            }
        });
    }

    static Stream<Arguments> cases() {
        List<Arguments> out = new ArrayList<>();
        for (int n : new int[] {1, 2, 4, 8, 16}) {
            for (SchedulingPolicy p : SchedulingPolicy.values()) {
                for (int chunk : new int[] {1, 7, 64}) out.add(Arguments.of(n, p, chunk));
            }
        }
        return out.stream();
    }

    @ParameterizedTest(name = "{0} sessions, {1}, chunk {2}")
    @MethodSource("cases")
    void everySessionsTokensAndLogitsAreBitIdenticalToItsSoloRun(int n, SchedulingPolicy policy, int chunk)
            throws Exception {
        SchedulerConfig config = SchedulerConfig.defaults().withPolicy(policy).withBatch(8, 64).withMaxPrefillChunk(chunk);
        List<Session> sessions = new ArrayList<>();
        List<Recorder> recorders = new ArrayList<>();
        EventLog log = new EventLog();
        try (Scheduler scheduler = new Scheduler(engine, config)) {
            scheduler.addListener(log);
            for (int i = 0; i < n; i++) {
                Recorder r = new Recorder();
                recorders.add(r);
                sessions.add(Runs.accepted(scheduler.submit(
                        SessionRequest.of("t" + i % 2, PROMPTS[i], MAX_TOKENS[i]).withSampler(r))));
            }
            scheduler.start();
            for (Session s : sessions) s.completion().get();
            assertThat(scheduler.stateBytesInUse()).isZero();
        }
        for (int i = 0; i < n; i++) {
            Recorder solo = solo(i);
            assertThat(recorders.get(i).tokens).as("tokens of session %d", i).isEqualTo(solo.tokens);
            for (int k = 0; k < solo.logits.size(); k++) {
                assertThat(recorders.get(i).logits.get(k)).as("logits %d of session %d", k, i).isEqualTo(solo.logits.get(k));
            }
        }
        if (n > 1) assertThat(log.iterations()).anySatisfy(e -> assertThat(e.sessions()).isGreaterThan(1));
    }

    /**
     * Not a timing assertion: records scheduler overhead against forward time and aggregate tok/s at
     * 1, 2, 4 and 8 decoding sessions, for the closing note. Asserts only that events carried both.
     */
    @Test
    void reportsSchedulerOverheadAndThroughput() throws Exception {
        SplittableRandom rnd = new SplittableRandom(5);
        for (int n : new int[] {1, 2, 4, 8}) {
            EventLog log = new EventLog();
            List<Session> sessions = new ArrayList<>();
            long t0;
            long t1;
            try (Scheduler scheduler = new Scheduler(engine, SchedulerConfig.defaults().withPolicy(SchedulingPolicy.MIXED))) {
                scheduler.addListener(log);
                for (int i = 0; i < n; i++) {
                    sessions.add(Runs.accepted(scheduler.submit(SessionRequest.of("t", Runs.prompt(rnd, 16,
                            engine.info().vocabSize()), 64))));
                }
                t0 = System.nanoTime();
                scheduler.start();
                for (Session s : sessions) s.completion().get();
                t1 = System.nanoTime();
            }
            List<IterationEvent> decode = log.iterations().stream().filter(e -> e.prefillChunks() == 0).toList();
            double overheadUs = decode.stream().mapToLong(IterationEvent::overheadNanos).average().orElseThrow() / 1e3;
            double forwardUs = decode.stream().mapToLong(IterationEvent::forwardNanos).average().orElseThrow() / 1e3;
            long generated = sessions.stream().mapToLong(s -> s.completion().join().accounting().generatedTokens()).sum();
            System.out.printf("llama-tiny %d sessions: %.0f tok/s aggregate, decode iteration forward %.1f us, "
                    + "scheduler overhead %.1f us (%.1f%%)%n", n, generated / ((t1 - t0) / 1e9), forwardUs, overheadUs,
                    100 * overheadUs / forwardUs);
            assertThat(decode).isNotEmpty().allSatisfy(e -> assertThat(e.forwardNanos()).isPositive());
            assertThat(generated).isEqualTo(64L * n);
        }
    }
}
