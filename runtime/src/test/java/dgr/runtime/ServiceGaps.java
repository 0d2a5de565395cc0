package dgr.runtime;

import dgr.runtime.SchedulerEvent.IterationEvent;
import dgr.runtime.SchedulerEvent.SessionAdmitted;
import java.util.HashMap;
import java.util.Map;

/** Longest waits between a session's services, read from iteration events only (no clocks). */
final class ServiceGaps {
    /** Longest run of iterations an admitted session spent in PREFILL without a chunk. */
    int maxPrefillWait;
    /** Longest run of iterations a session in DECODE spent without a row. */
    int maxDecodeWait;
    long prefillServices;

    static ServiceGaps of(EventLog log) {
        ServiceGaps g = new ServiceGaps();
        Map<Long, Long> lastService = new HashMap<>();
        for (SessionAdmitted a : log.of(SessionAdmitted.class)) lastService.put(a.sequenceId(), a.iteration() - 1);
        for (IterationEvent e : log.iterations()) {
            for (long id : e.prefillSessions()) {
                g.maxPrefillWait = Math.max(g.maxPrefillWait, (int) (e.iteration() - lastService.get(id) - 1));
                lastService.put(id, e.iteration());
                g.prefillServices++;
            }
            for (long id : e.decodeSessions()) {
                g.maxDecodeWait = Math.max(g.maxDecodeWait, (int) (e.iteration() - lastService.get(id) - 1));
                lastService.put(id, e.iteration());
            }
        }
        return g;
    }
}
