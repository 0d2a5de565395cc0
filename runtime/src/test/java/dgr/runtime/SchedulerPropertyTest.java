package dgr.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import dgr.runtime.SchedulerEvent.IterationEvent;
import dgr.runtime.SchedulerEvent.SessionAdmitted;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.stream.LongStream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Random arrivals, lengths, cancellations, deadlines, budgets and policies, one seed per case. After
 * every run: no slot leak, no key mixing, accounting equal to the rows the engine ran, tenant service
 * equal to the sum of accountings, every session not cancelled finished (with its solo tokens),
 * and every wait within its bound.
 */
class SchedulerPropertyTest {
    static LongStream seeds() { return LongStream.range(0, 40); }

    record Plan(int arrival, String tenant, int[] prompt, int maxTokens, int endToken, int cancelAt, boolean expired) {}

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void invariantsHoldForRandomWorkloads(long seed) {
        SplittableRandom rnd = new SplittableRandom(seed);
        boolean mixedEngine = rnd.nextBoolean();
        int rows = 1 + rnd.nextInt(8);
        SchedulerConfig config = SchedulerConfig.defaults()
                .withPolicy(rnd.nextBoolean() ? SchedulingPolicy.MIXED : SchedulingPolicy.DECODE_FIRST)
                .withBatch(rows, rows + rnd.nextInt(40)).withMaxPrefillChunk(1 + rnd.nextInt(16))
                .withWaitBounds(rnd.nextInt(6), 1 + rnd.nextInt(3)).withMaxWaitingSessions(4 + rnd.nextInt(30))
                .withFairness(rnd.nextBoolean());
        FakeEngine engine = new FakeEngine("fake", mixedEngine, 64, 64, 256, 16, "p" + seed);
        long maxReservation = engine.stateLayout().bytesForTokens(60 + 30 - 1);
        config = config.withStateBudgetBytes(maxReservation * (1 + rnd.nextInt(5)));

        List<Plan> plans = new ArrayList<>();
        int n = 10 + rnd.nextInt(25);
        for (int i = 0; i < n; i++) {
            plans.add(new Plan(rnd.nextInt(80), "t" + rnd.nextInt(3), Runs.prompt(rnd, 1 + rnd.nextInt(60), 64),
                    1 + rnd.nextInt(30), rnd.nextInt(4) == 0 ? rnd.nextInt(64) : -1,
                    rnd.nextInt(4) == 0 ? rnd.nextInt(120) : -1, rnd.nextInt(15) == 0));
        }

        EventLog log = new EventLog();
        Map<Session, Plan> accepted = new HashMap<>();
        Map<Session, Recorder> recorders = new HashMap<>();
        int rejected = 0;
        try (Scheduler scheduler = new Scheduler(engine, config)) {
            scheduler.addListener(log);
            for (int it = 0; it < 100_000; it++) {
                for (Plan p : plans) {
                    if (p.arrival() == it) {
                        Recorder rec = new Recorder();
                        StopConditions stop = StopConditions.maxTokens(p.maxTokens());
                        if (p.endToken() >= 0) stop = stop.withEndTokens(p.endToken());
                        var req = SessionRequest.of(p.tenant(), p.prompt(), p.maxTokens()).withStop(stop).withSampler(rec)
                                .withTimeout(p.expired() ? Duration.ZERO : null);
                        switch (scheduler.submit(req)) {
                            case Submission.Accepted a -> {
                                accepted.put(a.session(), p);
                                recorders.put(a.session(), rec);
                            }
                            case Submission.Rejected r -> {
                                assertThat(r.reason()).isEqualTo(RejectReason.OVER_CAPACITY);
                                rejected++;
                            }
                        }
                    }
                }
                for (var e : accepted.entrySet()) if (e.getValue().cancelAt() == it) e.getKey().cancel();
                scheduler.runIteration();
                assertThat(scheduler.reservedBytes()).isLessThanOrEqualTo(config.stateBudgetBytes());
                if (it > 200 && accepted.keySet().stream().allMatch(s -> s.completion().isDone())) break;
            }
            assertThat(accepted.keySet()).allSatisfy(s -> assertThat(s.completion()).isDone());
            // No slot leak.
            assertThat(engine.openSlots()).isZero();
            assertThat(scheduler.reservedBytes()).isZero();
            assertThat(scheduler.stateBytesInUse()).isZero();
            assertThat(scheduler.waitingCount()).isZero();
            var c = scheduler.counters();
            assertThat(c.submitted()).isEqualTo(plans.size());
            assertThat(c.rejected()).isEqualTo(rejected);
            assertThat(c.finished() + c.cancelled() + c.failed()).isEqualTo(accepted.size());
            assertThat(c.failed()).isZero();

            // No key mixing, batch by batch, against the rows the engine really ran.
            Map<Long, Integer> promptLengths = new HashMap<>();
            accepted.keySet().forEach(s -> promptLengths.put(s.sequenceId(), s.promptLength()));
            KeyCheck.oneKeyPerBatch(engine, log, promptLengths);
            for (IterationEvent e : log.iterations()) {
                assertThat(e.sessions()).isLessThanOrEqualTo(config.maxBatchSessions());
                assertThat(e.tokens()).isLessThanOrEqualTo(config.maxBatchTokens());
                assertThat(e.reservedBytes()).isLessThanOrEqualTo(config.stateBudgetBytes());
            }

            // Accounting equals what the engine processed; tenant service equals the accountings' sum.
            List<SessionAdmitted> admitted = log.of(SessionAdmitted.class);
            Map<Long, Integer> slotOf = new HashMap<>();
            for (int i = 0; i < admitted.size(); i++) slotOf.put(admitted.get(i).sequenceId(), i);
            Map<String, Long> service = new HashMap<>();
            for (Session s : accepted.keySet()) {
                Accounting acc = s.completion().join().accounting();
                Integer slot = slotOf.get(s.sequenceId());
                long rowsRun = slot == null ? 0 : CancellationTest.rowsOfSlot(engine, slot);
                assertThat(acc.processedRows()).as("rows of %s", s).isEqualTo(rowsRun);
                assertThat(acc.generatedTokens()).isEqualTo(recorders.get(s).tokens.size());
                service.merge(s.tenant(), acc.weightedService(1, 2), Long::sum);
            }
            Map<String, Long> reported = new HashMap<>(scheduler.tenantService());
            reported.values().removeIf(v -> v == 0);
            service.values().removeIf(v -> v == 0);
            assertThat(reported).isEqualTo(service);
        }

        // Every session not cancelled finished, with the tokens of its solo run.
        for (var e : accepted.entrySet()) {
            Session s = e.getKey();
            Plan p = e.getValue();
            var fin = s.completion().join();
            if (s.phase() == Phase.CANCELLED) {
                assertThat(p.cancelAt() >= 0 || p.expired()).as("%s cancelled without a cause", s).isTrue();
                continue;
            }
            assertThat(s.phase()).isEqualTo(Phase.FINISHED);
            List<Integer> tokens = recorders.get(s).tokens;
            if (fin.reason() == FinishReason.LENGTH) assertThat(tokens).hasSize(p.maxTokens());
            else assertThat(tokens.getLast()).isEqualTo(p.endToken());
            var solo = Runs.solo(() -> new FakeEngine("fake", mixedEngine, 64, 64, 256, 16, "p" + seed),
                    SchedulerConfig.defaults(), p.prompt(), p.maxTokens());
            List<Integer> soloTokens = solo.recorder().tokens;
            assertThat(tokens).isEqualTo(soloTokens.subList(0, tokens.size()));
        }

        // Bounded service.
        ServiceGaps gaps = ServiceGaps.of(log);
        assertThat(gaps.maxDecodeWait).as("decode wait, %s, mixed engine %s", config, mixedEngine).isLessThanOrEqualTo(config.decodeWaitBound(mixedEngine));
        assertThat(gaps.maxPrefillWait).isLessThanOrEqualTo(config.prefillWaitBound(mixedEngine));
    }
}
