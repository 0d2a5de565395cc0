package dgr.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import dgr.engine.sampler.GreedySampler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/**
 * Every session that leaves the waiting queue either runs or ends with {@code Finished}, and the
 * loop never parks while it has work: closed-loop clients (who resubmit only when their session
 * ends) must never all be left waiting. Waits are bounded; a stuck run fails with the scheduler's
 * state instead of hanging the build.
 */
class SchedulerLivenessTest {
    static final long WAIT_SECONDS = 20;
    final SplittableRandom rnd = new SplittableRandom(5);

    static SchedulerConfig small(boolean fairness) {
        return SchedulerConfig.defaults().withBatch(2, 64).withFairness(fairness);
    }

    @Test
    void aSlotThatCannotBeOpenedEndsItsSessionFailedAndTheOthersStillRun() {
        FakeEngine engine = FakeEngine.standard(false).failOpenWhen(n -> n == 0);
        try (Scheduler scheduler = new Scheduler(engine, small(true))) {
            Session first = Runs.accepted(scheduler.submit(SessionRequest.of("a", Runs.prompt(rnd, 5, 64), 3)));
            Session second = Runs.accepted(scheduler.submit(SessionRequest.of("b", Runs.prompt(rnd, 5, 64), 3)));
            for (int i = 0; i < 20 && !second.completion().isDone(); i++) scheduler.runIteration();

            var failed = first.completion().getNow(null);
            assertThat(failed).as("the session whose admission failed must hear its end").isNotNull();
            assertThat(failed.reason()).isEqualTo(FinishReason.ERROR);
            assertThat(failed.message()).contains("admission failed").contains("injected openSlot failure");
            assertThat(first.phase()).isEqualTo(Phase.FAILED);
            assertThat(second.completion().getNow(null)).isNotNull()
                    .extracting(SessionEvent.Finished::reason).isEqualTo(FinishReason.LENGTH);
            assertThat(scheduler.reservedBytes()).isZero();
            assertThat(scheduler.waitingCount()).isZero();
            assertThat(engine.openSlots()).isZero();
            assertThat(scheduler.counters().failed()).isEqualTo(1);
            assertThat(scheduler.counters().finished()).isEqualTo(1);
        }
    }

    @Test
    void aSlotThatFailsToCloseStillGivesBackItsReservation() {
        FakeEngine engine = FakeEngine.standard(false).failCloseWhen(id -> id == 0);
        // Room for exactly one session: the second is admitted only if the first's bytes come back.
        SchedulerConfig config = small(true).withStateBudgetBytes(engine.stateLayout().bytesForTokens(5 + 3 - 1));
        try (Scheduler scheduler = new Scheduler(engine, config)) {
            Session first = Runs.accepted(scheduler.submit(SessionRequest.of("a", Runs.prompt(rnd, 5, 64), 3)));
            Session second = Runs.accepted(scheduler.submit(SessionRequest.of("b", Runs.prompt(rnd, 5, 64), 3)));
            for (int i = 0; i < 20 && !second.completion().isDone(); i++) scheduler.runIteration();

            assertThat(first.completion().getNow(null)).isNotNull();
            assertThat(second.completion().getNow(null)).as("admitted once the first session's bytes came back")
                    .isNotNull().extracting(SessionEvent.Finished::reason).isEqualTo(FinishReason.LENGTH);
            assertThat(scheduler.reservedBytes()).isZero();
        }
    }

    /**
     * The benchmark's pattern (1 client against 6, two batch rows, each client resubmitting the
     * instant its session ends) with admission failing now and then. Before the fix the failure
     * escaped the iteration, the loop parked with sessions waiting and running, and since every
     * client was waiting for a Finished nobody ever woke it.
     */
    @Test
    void theLoopKeepsServingClosedLoopClientsAfterAnAdmissionFailure() throws Exception {
        FakeEngine engine = FakeEngine.standard(false).failOpenWhen(n -> n % 5 == 3);
        try (Scheduler scheduler = new Scheduler(engine, small(true)).start()) {
            ClosedLoop load = new ClosedLoop(scheduler, 64, 300, false, 17);
            load.start();
            load.await();
            assertThat(load.failed.get()).isPositive();
            assertThat(load.ended.get()).isGreaterThanOrEqualTo(300);
        }
    }

    @ParameterizedTest(name = "fairness {0}")
    @ValueSource(booleans = {true, false})
    void closedLoopClientsWithCancelsAndDeadlinesAreNeverStranded(boolean fairness) throws Exception {
        FakeEngine engine = FakeEngine.standard(false);
        // A budget of about two typical reservations, so the head-of-line rule bites too.
        SchedulerConfig config = small(fairness).withStateBudgetBytes(engine.stateLayout().bytesForTokens(40));
        try (Scheduler scheduler = new Scheduler(engine, config).start()) {
            ClosedLoop load = new ClosedLoop(scheduler, 64, 2_000, true, fairness ? 23 : 29);
            load.start();
            load.await();
            assertThat(load.ended.get()).isGreaterThanOrEqualTo(2_000);
        }
        assertThat(engine.openSlots()).isZero();
    }

    @Test
    void aSubmissionRacingCloseStillEnds() throws Exception {
        FakeEngine engine = FakeEngine.standard(false);
        Scheduler scheduler = new Scheduler(engine, small(true)).start();
        Map<Long, Session> accepted = new ConcurrentHashMap<>();
        List<Thread> submitters = new ArrayList<>();
        AtomicInteger started = new AtomicInteger();
        for (int t = 0; t < 4; t++) {
            int seed = t;
            submitters.add(Thread.ofPlatform().start(() -> {
                SplittableRandom r = new SplittableRandom(seed);
                started.incrementAndGet();
                while (true) {
                    Submission sub = scheduler.submit(SessionRequest.of("t" + seed, Runs.prompt(r, 4, 64), 2));
                    if (sub instanceof Submission.Accepted a) accepted.put(a.session().sequenceId(), a.session());
                    else if (((Submission.Rejected) sub).reason() == RejectReason.CLOSED) return;
                }
            }));
        }
        while (started.get() < 4 || accepted.size() < 200) Thread.onSpinWait();
        scheduler.close();
        for (Thread t : submitters) t.join();
        CompletableFuture<?>[] all = accepted.values().stream().map(Session::completion).toArray(CompletableFuture[]::new);
        CompletableFuture.allOf(all).get(WAIT_SECONDS, TimeUnit.SECONDS);
        assertThat(accepted.values()).allMatch(s -> s.phase().isTerminal());
        assertThat(scheduler.waitingCount()).isZero();
    }

    /**
     * Seven closed-loop clients (tenant "one" has 1, tenant "six" has 6). Each resubmits from its
     * Finished callback (on the scheduler thread) or, every other client, from its own virtual
     * thread; with {@code chaos}, some sessions get short deadlines and a canceller thread cancels
     * live and already-ended sessions.
     */
    static final class ClosedLoop {
        final Scheduler scheduler;
        final int vocab;
        final int target;
        final boolean chaos;
        final long seed;
        final AtomicInteger ended = new AtomicInteger();
        final AtomicInteger failed = new AtomicInteger();
        final CompletableFuture<Void> reached = new CompletableFuture<>();
        final Map<Long, Session> live = new ConcurrentHashMap<>();
        final List<Thread> threads = new ArrayList<>();
        volatile boolean stop;

        ClosedLoop(Scheduler scheduler, int vocab, int target, boolean chaos, long seed) {
            this.scheduler = scheduler;
            this.vocab = vocab;
            this.target = target;
            this.chaos = chaos;
            this.seed = seed;
        }

        void start() {
            for (int c = 0; c < 7; c++) {
                String tenant = c == 0 ? "one" : "six";
                SplittableRandom r = new SplittableRandom(seed * 31 + c);
                if (c % 2 == 0) submitFromCallback(tenant, r);
                else threads.add(Thread.ofVirtual().start(() -> blockingClient(tenant, r)));
            }
            if (chaos) {
                threads.add(Thread.ofPlatform().daemon().start(() -> {
                    SplittableRandom r = new SplittableRandom(seed);
                    List<Session> recent = new ArrayList<>();
                    while (!stop) {
                        for (Session s : live.values()) {
                            if (r.nextInt(40) == 0) s.cancel("chaos");
                            if (recent.size() < 64) recent.add(s);
                        }
                        // Cancelling after the end must be harmless.
                        if (!recent.isEmpty()) recent.remove(recent.size() - 1).cancel("late");
                        Thread.yield();
                    }
                }));
            }
        }

        SessionRequest request(String tenant, SplittableRandom r, SessionListener listener) {
            Duration timeout = chaos && r.nextInt(8) == 0 ? Duration.ofNanos(r.nextLong(2_000_000)) : null;
            return new SessionRequest(tenant, Runs.prompt(r, 1 + r.nextInt(20), vocab), GreedySampler.INSTANCE,
                    StopConditions.maxTokens(1 + r.nextInt(14)), null, timeout, listener);
        }

        void ended(SessionEvent.Finished f) {
            if (f.reason() == FinishReason.ERROR) failed.incrementAndGet();
            if (ended.incrementAndGet() >= target) {
                stop = true;
                reached.complete(null);
            }
        }

        void submitFromCallback(String tenant, SplittableRandom r) {
            if (stop) return;
            SessionListener listener = e -> {
                if (e instanceof SessionEvent.Finished f) {
                    ended(f);
                    submitFromCallback(tenant, r);
                }
            };
            track(scheduler.submit(request(tenant, r, listener)), r);
        }

        void blockingClient(String tenant, SplittableRandom r) {
            while (!stop) {
                Session s = track(scheduler.submit(request(tenant, r, SessionListener.NONE)), r);
                if (s == null) return;
                try {
                    ended(s.completion().get(WAIT_SECONDS, TimeUnit.SECONDS));
                } catch (Exception e) {
                    reached.completeExceptionally(new AssertionError("session " + s + " never ended", e));
                    return;
                }
            }
        }

        Session track(Submission sub, SplittableRandom r) {
            if (!(sub instanceof Submission.Accepted a)) {
                if (!stop) reached.completeExceptionally(new AssertionError("refused: " + sub));
                return null;
            }
            Session s = a.session();
            live.put(s.sequenceId(), s);
            s.completion().thenRun(() -> live.remove(s.sequenceId()));
            if (chaos && r.nextInt(10) == 0) s.cancel("at once");
            return s;
        }

        void await() throws Exception {
            try {
                reached.get(WAIT_SECONDS, TimeUnit.SECONDS);
            } catch (TimeoutException e) {
                var stuck = new AssertionError("stuck after " + ended.get() + " ends: running "
                        + scheduler.runningCount() + ", waiting " + scheduler.waitingCount() + ", reserved "
                        + scheduler.reservedBytes() + ", iteration " + scheduler.iteration() + ", live " + live.values());
                // Closing ends every session, which releases the blocked clients joined below.
                scheduler.close();
                throw stuck;
            } finally {
                stop = true;
                for (Thread t : threads) t.join(Duration.ofSeconds(WAIT_SECONDS));
            }
        }
    }
}
