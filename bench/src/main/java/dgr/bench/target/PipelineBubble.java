package dgr.bench.target;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A route's bubble over one level, from the head's {@code /metrics} before and after it: the head
 * waited {@code Δdgr_route_wait_seconds / Δdgr_route_clock_seconds} of the time, each later stage
 * (by span) {@code 1 - Δdgr_route_stage_busy_seconds / Δdgr_route_stage_clock_seconds} (counters the
 * stages relay to the head a few times a second).
 */
final class PipelineBubble {
    private static final String WAIT = "dgr_route_wait_seconds_total", CLOCK = "dgr_route_clock_seconds_total";
    private static final String BUSY = "dgr_route_stage_busy_seconds_total", STAGE_CLOCK = "dgr_route_stage_clock_seconds_total";

    private PipelineBubble() {}

    /** Stage → bubble fraction, or null when the server is not a route's head. */
    static Map<String, Double> between(PrometheusText before, PrometheusText after) {
        Double wait = delta(after.value(WAIT), before.value(WAIT));
        Double clock = delta(after.value(CLOCK), before.value(CLOCK));
        if (wait == null || clock == null || clock <= 0) return null;
        Map<String, Double> out = new LinkedHashMap<>();
        out.put("head", clamp(wait / clock));
        Map<String, Double> busyBefore = before.byLabel(BUSY, "span"), clockBefore = before.byLabel(STAGE_CLOCK, "span");
        Map<String, Double> clockAfter = after.byLabel(STAGE_CLOCK, "span");
        after.byLabel(BUSY, "span").forEach((span, busy) -> {
            // A span first seen after the level began (or a replacement) has no window: left out.
            if (!busyBefore.containsKey(span) || !clockBefore.containsKey(span)) return;
            Double dBusy = delta(busy, busyBefore.get(span));
            Double dClock = delta(clockAfter.get(span), clockBefore.get(span));
            if (dBusy != null && dClock != null && dClock > 0) out.put(span, clamp(1 - dBusy / dClock));
        });
        return out;
    }

    private static Double delta(Double a, Double b) { return a == null ? null : a - (b == null ? 0 : b); }

    private static double clamp(double f) { return Math.max(0, Math.min(1, f)); }
}
