package dgr.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import dgr.runtime.SchedulerEvent.SessionAdmitted;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * A resumed session (a stream moved here from a failed node, its client mid-stream) is admitted before
 * sessions that waited longer and, under decode-first, prefilled every other iteration instead of after
 * maxPrefillWaitIterations waits; the decode bound of the running sessions still holds.
 */
class ResumedSessionTest {

    /** Iterations from submission until the session's first token, with 3 sessions decoding beside it. */
    private static int iterationsToFirstToken(boolean resumed, EventLog log, List<Long> admissionOrder) {
        SchedulerConfig config = SchedulerConfig.defaults().withBatch(4, 32).withMaxPrefillChunk(8).withWaitBounds(4, 1);
        SplittableRandom rnd = new SplittableRandom(11);
        try (Scheduler scheduler = new Scheduler(FakeEngine.standard(false), config)) {
            scheduler.addListener(log);
            List<Session> decoders = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                decoders.add(Runs.accepted(scheduler.submit(SessionRequest.of("t" + i, Runs.prompt(rnd, 4, 64), 200))));
            }
            while (decoders.stream().anyMatch(s -> s.phase() == Phase.PREFILL)) scheduler.runIteration();
            // One free slot: a fresh session asks first, the resumed one (40 tokens: prompt + delivered) after it.
            Session fresh = Runs.accepted(scheduler.submit(SessionRequest.of("t0", Runs.prompt(rnd, 40, 64), 4)));
            SessionRequest r = SessionRequest.of("t1", Runs.prompt(rnd, 40, 64), 4);
            Session late = Runs.accepted(scheduler.submit(resumed ? r.asResumed() : r));
            int iterations = 0;
            while (late.phase() == Phase.PREFILL) { // waiting or prefilling: its first token ends PREFILL
                scheduler.runIteration();
                if (++iterations > 1000) throw new AssertionError("never served");
            }
            for (Session s : decoders) s.cancel("test over");
            fresh.cancel("test over");
            late.cancel("test over");
            while (scheduler.runIteration()) { /* end everything */ }
            for (SessionAdmitted a : log.of(SessionAdmitted.class)) admissionOrder.add(a.sequenceId());
            admissionOrder.retainAll(List.of(fresh.sequenceId(), late.sequenceId()));
            admissionOrder.replaceAll(id -> id == late.sequenceId() ? 1L : 0L);
            return iterations;
        }
    }

    @Test
    void aResumedSessionIsAdmittedFirstAndPrefilledWithoutWaitingWhileDecodeKeepsItsBound() {
        EventLog plainLog = new EventLog();
        List<Long> plainOrder = new ArrayList<>();
        int plain = iterationsToFirstToken(false, plainLog, plainOrder);
        EventLog log = new EventLog();
        List<Long> order = new ArrayList<>();
        int resumed = iterationsToFirstToken(true, log, order);
        System.out.printf("first token after %d iterations resumed, %d as a fresh session%n", resumed, plain);
        assertThat(plainOrder).as("fresh: arrival order (1 = the later session)").startsWith(0L);
        assertThat(order).as("resumed: admitted before the fresh session that asked first").startsWith(1L);
        // 40 tokens in chunks of 8 = 5 prefill iterations, each followed by the decode it owes: <= 10.
        assertThat(resumed).isLessThanOrEqualTo(10);
        assertThat(plain).as("a fresh session behind running decoders waits W iterations per chunk").isGreaterThan(20);
        assertThat(ServiceGaps.of(log).maxDecodeWait).as("decode wait with a resumed prefill")
                .isLessThanOrEqualTo(SchedulerConfig.defaults().withWaitBounds(4, 1).decodeWaitBound(false));
    }
}
