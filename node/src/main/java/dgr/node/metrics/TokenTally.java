package dgr.node.metrics;

import dgr.runtime.SchedulerEvent;
import io.prometheus.metrics.core.datapoints.CounterDataPoint;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * Moves a model's generated-token counter with every iteration instead of only when a session
 * ends, and still lands on the sessions' exact accounting: each decode row of an iteration counts
 * one token for its session; when a session ends, what its accounting says beyond what was counted
 * (its first token, sampled as its prefill completed) is added. A session's end is published before
 * the iteration it ended in, so that iteration's row of an ended session is not counted again.
 * One model's events arrive on its scheduler's thread only.
 */
final class TokenTally {
    private final Map<Long, Long> counted = new HashMap<>();
    private final Set<Long> endedThisIteration = new HashSet<>();

    void iteration(SchedulerEvent.IterationEvent it, CounterDataPoint generated) {
        long n = 0;
        for (long id : it.decodeSessions()) {
            if (endedThisIteration.contains(id)) continue;
            counted.merge(id, 1L, Long::sum);
            n++;
        }
        endedThisIteration.clear();
        if (n > 0) generated.inc(n);
    }

    void ended(SchedulerEvent.SessionEnded end, CounterDataPoint generated) {
        Long c = counted.remove(end.sequenceId());
        long rest = end.accounting().generatedTokens() - (c == null ? 0 : c);
        if (rest > 0) generated.inc(rest);
        endedThisIteration.add(end.sequenceId());
    }
}
