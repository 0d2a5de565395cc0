package dgr.node.stage;

import dgr.node.stage.wire.StageLoad;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The head's view of how busy each later stage of its route is, as the stages last reported it
 * ({@code StageLoad} relayed up the route). Keyed by span ("A-B"): a replacement for a dead stage
 * serves the same span and restarts its counters, so a window that spans a failover is off for that span.
 */
public final class RouteLoad {
    /** One span's counters: computing time and its own clock, both in nanoseconds since it started. */
    public record Span(long busyNanos, long clockNanos) {}

    private final Map<String, Span> spans = new ConcurrentHashMap<>();

    void update(StageLoad l) {
        spans.put(l.getFirstLayer() + "-" + l.getEndLayer(), new Span(l.getBusyNanos(), l.getClockNanos()));
    }

    /** Span ("A-B") → its last report, ordered by span. */
    public Map<String, Span> spans() { return new TreeMap<>(spans); }
}
