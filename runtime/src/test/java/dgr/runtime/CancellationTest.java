package dgr.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Cancellation, deadlines, admission and failure: slots come back and accounting stays exact. */
class CancellationTest {
    final SplittableRandom rnd = new SplittableRandom(11);

    /** Rows the fake engine really processed for the {@code k}-th slot it opened. */
    static long rowsOfSlot(FakeEngine engine, int slotId) {
        return engine.batches().stream().flatMap(b -> b.rows().stream()).filter(r -> r.slotId() == slotId).count();
    }

    @Test
    void cancellingMidPrefillFreesTheSlotAndCountsOnlyTheProcessedChunks() {
        FakeEngine engine = FakeEngine.standard(false);
        SchedulerConfig config = SchedulerConfig.defaults().withBatch(4, 16).withMaxPrefillChunk(5);
        try (Scheduler scheduler = new Scheduler(engine, config)) {
            Session other = Runs.accepted(scheduler.submit(SessionRequest.of("t", Runs.prompt(rnd, 6, 64), 50)));
            while (other.position() < 9) scheduler.runIteration();
            long before = scheduler.stateBytesInUse();
            long reservedBefore = scheduler.reservedBytes();
            TokenStream stream = new TokenStream();
            Session s = Runs.accepted(scheduler.submit(
                    SessionRequest.of("t", Runs.prompt(rnd, 40, 64), 10).withListener(stream)));
            // Decode-first: the prefill gets its chunks once it has waited maxPrefillWaitIterations.
            while (s.position() < 10) scheduler.runIteration();
            assertThat(s.phase()).isEqualTo(Phase.PREFILL);
            assertThat(s.position()).isBetween(1, 39);
            s.cancel();
            scheduler.runIteration();
            var fin = s.completion().join();
            assertThat(fin.reason()).isEqualTo(FinishReason.CANCELLED);
            assertThat(fin.message()).isEqualTo("cancelled by owner");
            assertThat(s.phase()).isEqualTo(Phase.CANCELLED);
            assertThat(fin.accounting().generatedTokens()).isZero();
            assertThat(fin.accounting().promptTokens()).isEqualTo(s.position()).isEqualTo(rowsOfSlot(engine, 1));
            assertThat(fin.accounting().processedRows()).isEqualTo(rowsOfSlot(engine, 1));
            assertThat(stream.poll(0, TimeUnit.SECONDS)).isEqualTo(fin);
            // Bytes back to the pre-session value: only the other session's (grown) slot is left.
            assertThat(before).isEqualTo(engine.stateLayout().bytesForTokens(9));
            assertThat(scheduler.stateBytesInUse()).isEqualTo(engine.stateLayout().bytesForTokens(other.position()));
            assertThat(scheduler.reservedBytes()).isEqualTo(reservedBefore);
            assertThat(engine.openSlots()).isEqualTo(1);
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void cancellingMidDecodeFreesTheSlotAndAccountingEqualsProcessedTokens() throws Exception {
        FakeEngine engine = FakeEngine.standard(true);
        try (Scheduler scheduler = new Scheduler(engine, SchedulerConfig.defaults().withPolicy(SchedulingPolicy.MIXED))) {
            TokenStream stream = new TokenStream();
            Session s = Runs.accepted(scheduler.submit(
                    SessionRequest.of("t", Runs.prompt(rnd, 12, 64), 100).withListener(stream)));
            for (int i = 0; i < 6; i++) scheduler.runIteration();
            assertThat(s.phase()).isEqualTo(Phase.DECODE);
            assertThat(scheduler.stateBytesInUse()).isPositive();
            s.cancel("client gone");
            scheduler.runIteration();
            var fin = s.completion().join();
            assertThat(fin.reason()).isEqualTo(FinishReason.CANCELLED);
            assertThat(fin.message()).isEqualTo("client gone");
            Accounting acc = fin.accounting();
            assertThat(acc.promptTokens()).isEqualTo(12);
            assertThat(acc.generatedTokens()).isEqualTo(6);
            assertThat(acc.processedRows()).isEqualTo(rowsOfSlot(engine, 0)).isEqualTo(12 + 5);
            assertThat(acc.interTokenNanos()).hasSize(5);
            assertThat(acc.ttftNanos()).isGreaterThanOrEqualTo(acc.queueNanos());
            assertThat(scheduler.stateBytesInUse()).isZero();
            assertThat(scheduler.reservedBytes()).isZero();
            assertThat(engine.openSlots()).isZero();
            List<SessionEvent> events = new ArrayList<>();
            SessionEvent e;
            while ((e = stream.poll(0, TimeUnit.SECONDS)) != null) events.add(e);
            assertThat(events).hasSize(7).last().isEqualTo(fin);
            assertThat(scheduler.counters().cancelled()).isEqualTo(1);
        }
    }

    @Test
    void aDeadlineCancelsTheSessionWithItsReason() {
        FakeEngine engine = FakeEngine.standard(false);
        try (Scheduler scheduler = new Scheduler(engine, SchedulerConfig.defaults())) {
            Session s = Runs.accepted(scheduler.submit(
                    SessionRequest.of("t", Runs.prompt(rnd, 3, 64), 100).withTimeout(Duration.ZERO)));
            scheduler.runIteration();
            var fin = s.completion().join();
            assertThat(fin.reason()).isEqualTo(FinishReason.CANCELLED);
            assertThat(fin.message()).isEqualTo("deadline exceeded");
            assertThat(fin.accounting().queueNanos()).isEqualTo(-1);
            assertThat(engine.openSlots()).isZero();
            assertThat(scheduler.waitingCount()).isZero();
        }
    }

    @Test
    void aSessionWaitsUntilItsStateFitsAndAFullQueueIsRejectedAsOverCapacity() {
        FakeEngine engine = FakeEngine.standard(false);
        long one = engine.stateLayout().bytesForTokens(10 + 5 - 1);
        SchedulerConfig config = SchedulerConfig.defaults().withStateBudgetBytes(one).withMaxWaitingSessions(2);
        try (Scheduler scheduler = new Scheduler(engine, config)) {
            Session first = Runs.accepted(scheduler.submit(SessionRequest.of("t", Runs.prompt(rnd, 10, 64), 5)));
            Session second = Runs.accepted(scheduler.submit(SessionRequest.of("t", Runs.prompt(rnd, 10, 64), 5)));
            scheduler.runIteration();
            assertThat(scheduler.runningCount()).isEqualTo(1);
            assertThat(second.phase()).isEqualTo(Phase.PREFILL);
            assertThat(scheduler.reservedBytes()).isEqualTo(one);
            Session third = Runs.accepted(scheduler.submit(SessionRequest.of("t", Runs.prompt(rnd, 10, 64), 5)));
            var refused = scheduler.submit(SessionRequest.of("t", Runs.prompt(rnd, 10, 64), 5));
            assertThat(refused).isInstanceOfSatisfying(Submission.Rejected.class, r -> {
                assertThat(r.reason()).isEqualTo(RejectReason.OVER_CAPACITY);
                assertThat(r.message()).contains("over capacity");
            });
            while (!third.completion().isDone()) {
                scheduler.runIteration();
                assertThat(scheduler.reservedBytes()).isLessThanOrEqualTo(one);
            }
            assertThat(List.of(first, second, third)).allSatisfy(s -> assertThat(s.phase()).isEqualTo(Phase.FINISHED));
            assertThat(scheduler.counters().rejected()).isEqualTo(1);
            assertThat(scheduler.counters().admitted()).isEqualTo(3);
        }
    }

    @Test
    void requestsThatCanNeverRunAreRejectedWithAClearReason() {
        FakeEngine engine = FakeEngine.standard(false);
        SchedulerConfig config = SchedulerConfig.defaults().withStateBudgetBytes(1000);
        try (Scheduler scheduler = new Scheduler(engine, config)) {
            assertThat(scheduler.submit(SessionRequest.of("t", new int[0], 5)))
                    .isEqualTo(new Submission.Rejected(RejectReason.INVALID_REQUEST, "prompt is empty"));
            assertThat(scheduler.submit(SessionRequest.of("t", new int[] {64}, 5)))
                    .extracting(r -> ((Submission.Rejected) r).reason()).isEqualTo(RejectReason.INVALID_REQUEST);
            assertThat(scheduler.submit(SessionRequest.of("t", new int[] {1}, 513)))
                    .extracting(r -> ((Submission.Rejected) r).reason()).isEqualTo(RejectReason.EXCEEDS_CONTEXT);
            assertThat(scheduler.submit(SessionRequest.of("t", new int[] {1, 2}, 20)))
                    .extracting(r -> ((Submission.Rejected) r).reason()).isEqualTo(RejectReason.EXCEEDS_STATE_BUDGET);
            assertThat(scheduler.submit(SessionRequest.of("t", new int[] {1}, 3).withStop(
                    StopConditions.maxTokens(3).withStopStrings("x"))))
                    .extracting(r -> ((Submission.Rejected) r).reason()).isEqualTo(RejectReason.INVALID_REQUEST);
            assertThat(scheduler.waitingCount()).isZero();
            assertThat(scheduler.runIteration()).isFalse();
            assertThat(engine.openSlots()).isZero();
        }
    }

    @Test
    void anEngineFailureFailsOnlyThatBatchsSessionsAndTheLoopKeepsServing() throws Exception {
        // Fails the first batch that holds token 63 at position 0 of a slot: the poisoned session's prefill.
        FakeEngine engine = FakeEngine.standard(false);
        engine.failWhen(b -> {
            for (int r = 0; r < b.size(); r++) if (b.token(r) == 63 && b.position(r) == 0) return true;
            return false;
        });
        try (Scheduler scheduler = new Scheduler(engine, SchedulerConfig.defaults().withMaxPrefillChunk(4)).start()) {
            Session healthy = Runs.accepted(scheduler.submit(SessionRequest.of("t", new int[] {1, 2, 3}, 40)));
            healthy.completion().get();
            Session poisoned = Runs.accepted(scheduler.submit(SessionRequest.of("t", new int[] {63, 2, 3}, 5)));
            var fin = poisoned.completion().get();
            assertThat(fin.reason()).isEqualTo(FinishReason.ERROR);
            assertThat(fin.message()).contains("injected failure").contains("fake-split/1");
            assertThat(poisoned.phase()).isEqualTo(Phase.FAILED);
            assertThat(fin.accounting().promptTokens()).isZero();
            Session after = Runs.accepted(scheduler.submit(SessionRequest.of("t", new int[] {5, 6}, 4)));
            assertThat(after.completion().get().reason()).isEqualTo(FinishReason.LENGTH);
            assertThat(scheduler.counters().failed()).isEqualTo(1);
            assertThat(scheduler.counters().finished()).isEqualTo(2);
            assertThat(engine.openSlots()).isZero();
            assertThat(scheduler.reservedBytes()).isZero();
        }
    }

    @Test
    void closingTheSchedulerCancelsWaitingAndRunningSessions() throws Exception {
        FakeEngine engine = FakeEngine.standard(false);
        Session running;
        Session waiting;
        long one = engine.stateLayout().bytesForTokens(4 + 100 - 1);
        try (Scheduler scheduler = new Scheduler(engine, SchedulerConfig.defaults().withStateBudgetBytes(one))) {
            running = Runs.accepted(scheduler.submit(SessionRequest.of("t", Runs.prompt(rnd, 4, 64), 100)));
            waiting = Runs.accepted(scheduler.submit(SessionRequest.of("t", Runs.prompt(rnd, 4, 64), 100)));
            scheduler.runIteration();
        }
        assertThat(running.completion().get().message()).isEqualTo("scheduler closed");
        assertThat(waiting.completion().get().reason()).isEqualTo(FinishReason.CANCELLED);
        assertThat(engine.openSlots()).isZero();
    }
}
