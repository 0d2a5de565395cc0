package dgr.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import dgr.engine.Batch;
import dgr.engine.ForwardResult;
import dgr.engine.sampler.TokenSampler;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * A session the route holds after its token ({@link Downstream#holds}: a failover's replay still computing
 * other sessions) gets no next row until the hold ends, while the others go on; then it runs to its end.
 */
class HeldSessionsTest {
    /** A route that answers every output row with token 7 at the next receive, and holds the sessions in {@link #held}. */
    static final class EchoRoute implements Downstream {
        final Set<Long> held = new HashSet<>();
        final Map<Long, Integer> rowsSent = new HashMap<>();
        final Map<Long, Integer> holdsAsked = new HashMap<>();
        private final ArrayDeque<Long> replies = new ArrayDeque<>();

        @Override public int depth() { return 1; }
        @Override public void open(long sequenceId, TokenSampler sampler) { }

        @Override
        public void send(Batch batch, ForwardResult boundary, long[] rowSessions) {
            for (int r = 0; r < batch.size(); r++) {
                rowsSent.merge(rowSessions[r], 1, Integer::sum);
                if (batch.wantsOutput(r)) replies.add(rowSessions[r]);
            }
        }

        @Override
        public void receive(long timeoutNanos, Replies out) {
            while (!replies.isEmpty()) out.token(replies.poll(), 7);
        }

        @Override
        public boolean holds(long sequenceId) {
            holdsAsked.merge(sequenceId, 1, Integer::sum);
            return held.contains(sequenceId);
        }

        @Override public void wake() { }
        @Override public void close(long sequenceId, Phase phase, String reason) { }
    }

    @Test
    void aHeldSessionWaitsForItsHoldToEndAndTheOthersGoOn() {
        SplittableRandom rnd = new SplittableRandom(3);
        EchoRoute route = new EchoRoute();
        try (FakeEngine engine = FakeEngine.head();
             Scheduler scheduler = new Scheduler(engine, SchedulerConfig.defaults().withBatch(4, 64), route)) {
            Session a = Runs.accepted(scheduler.submit(SessionRequest.of("a", Runs.prompt(rnd, 5, 64), 6)));
            Session b = Runs.accepted(scheduler.submit(SessionRequest.of("b", Runs.prompt(rnd, 5, 64), 6)));
            route.held.add(a.sequenceId());
            for (int i = 0; i < 200 && !b.completion().isDone(); i++) scheduler.runIteration();

            assertThat(b.completion().getNow(null)).as("the session not held runs to its end").isNotNull()
                    .extracting(SessionEvent.Finished::reason).isEqualTo(FinishReason.LENGTH);
            assertThat(a.completion().isDone()).isFalse();
            assertThat(route.rowsSent.get(a.sequenceId())).as("the held session's prompt only, no decode row").isEqualTo(5);
            assertThat(route.holdsAsked.get(a.sequenceId())).as("its hold is asked again while it lasts").isGreaterThan(1);

            route.held.clear();
            for (int i = 0; i < 200 && !a.completion().isDone(); i++) scheduler.runIteration();
            assertThat(a.completion().getNow(null)).as("released, it runs to its end").isNotNull()
                    .extracting(SessionEvent.Finished::reason).isEqualTo(FinishReason.LENGTH);
            assertThat(route.rowsSent.get(a.sequenceId())).isEqualTo(5 + 5);
            assertThat(scheduler.reservedBytes()).isZero();
        }
    }
}
