package dgr.runtime;

import dgr.runtime.SchedulerEvent.IterationEvent;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/** Collects scheduler events; read after the sessions' completions were awaited. */
final class EventLog implements SchedulerListener {
    final List<SchedulerEvent> events = Collections.synchronizedList(new ArrayList<>());

    @Override
    public void onEvent(SchedulerEvent e) { events.add(e); }

    List<IterationEvent> iterations() {
        synchronized (events) {
            return events.stream().filter(IterationEvent.class::isInstance).map(IterationEvent.class::cast).toList();
        }
    }

    <T extends SchedulerEvent> List<T> of(Class<T> type) {
        synchronized (events) {
            return events.stream().filter(type::isInstance).map(type::cast).toList();
        }
    }
}
