package dgr.tracker.registry;

import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * One node as the tracker knows it: what its last report said, and what the tracker itself has sent
 * it since. Reports replace the static part; the in-flight counts are the tracker's own, exact and
 * immediate, so routing does not wait a heartbeat to see the sessions it just placed.
 *
 * <p>Running sessions of a model = the tracker's in-flight count + the sessions the node runs for
 * others (its last reported running minus the tracker's in-flight count when the report arrived).
 */
public final class RegisteredNode {
    private final String id;
    private final Backend backend;
    private volatile URI url;
    private volatile String bearer;
    private volatile Map<String, ModelCapacity> models = Map.of();
    /** The span it serves when it is a later stage of a route, else null. */
    private volatile StageSpan stage;
    private volatile Map<String, Integer> othersRunning = Map.of();
    /** Each model's sessions not leased here, as the latest report alone showed them (guarded by this). */
    private final Map<String, Integer> lastSeenOthers = new HashMap<>();
    private volatile long lastReportNanos;
    private volatile Instant lastReport;
    /** When a connection to the node broke (nanoTime), or 0: out of routing until a later report. */
    private volatile long brokenAtNanos;
    private volatile String brokenReason;
    private final Map<String, AtomicInteger> inFlight = new ConcurrentHashMap<>();
    private final Map<String, ServiceTimes> times = new ConcurrentHashMap<>();
    private final LongAdder routed = new LongAdder();
    private final LongAdder failures = new LongAdder();

    RegisteredNode(String id, Backend backend, URI url) {
        this.id = id;
        this.backend = backend;
        this.url = url;
    }

    synchronized void report(URI url, String bearer, Map<String, ModelCapacity> models, StageSpan stage, long nowNanos, Instant now) {
        this.url = url;
        this.stage = stage;
        this.bearer = bearer;
        // Sessions the node runs that the tracker did not lease (other trackers, direct clients) count
        // against its headroom only when two reports in a row show them: a report sent just before a
        // leased session ended still counts it, and read alone it made the freed slot look taken until
        // the next heartbeat (about 1 s) while requests queued for it.
        Map<String, Integer> others = new HashMap<>();
        for (ModelCapacity m : models.values()) {
            int seen = Math.max(0, m.reportedRunning() - inFlight(m.model()));
            others.put(m.model(), Math.min(seen, lastSeenOthers.getOrDefault(m.model(), 0)));
            lastSeenOthers.put(m.model(), seen);
        }
        this.models = Map.copyOf(models);
        this.othersRunning = Map.copyOf(others);
        this.lastReportNanos = nowNanos;
        this.lastReport = now;
        if (brokenAtNanos != 0 && nowNanos - brokenAtNanos > 0) {
            brokenAtNanos = 0;
            brokenReason = null;
        }
    }

    /** A connection to the node failed: out of routing at once, back when it reports again. */
    void markBroken(long nowNanos, String reason) {
        brokenAtNanos = nowNanos == 0 ? 1 : nowNanos;
        brokenReason = reason;
        failures.increment();
    }

    public boolean healthy(long nowNanos, Duration heartbeatTimeout) {
        return lastReport != null && brokenAtNanos == 0 && nowNanos - lastReportNanos <= heartbeatTimeout.toNanos();
    }

    /** Why the node is out of routing, or null when it is not. */
    public String unhealthyReason(long nowNanos, Duration heartbeatTimeout) {
        if (lastReport == null) return "no report yet";
        if (brokenAtNanos != 0) return "connection failed: " + brokenReason;
        long silent = nowNanos - lastReportNanos;
        if (silent > heartbeatTimeout.toNanos()) return "no heartbeat for " + silent / 1_000_000 + " ms";
        return null;
    }

    public int running(String model) {
        return inFlight(model) + othersRunning.getOrDefault(model, 0);
    }

    /** Recommended concurrency minus running sessions; negative when over. */
    public int headroom(String model) {
        ModelCapacity m = models.get(model);
        return m == null ? 0 : m.recommendedMaxConcurrency() - running(model);
    }

    /** What the tracker saw of this node serving {@code model}. */
    public ServiceTimes times(String model) { return times.computeIfAbsent(model, k -> new ServiceTimes()); }

    public int inFlight(String model) {
        AtomicInteger n = inFlight.get(model);
        return n == null ? 0 : n.get();
    }

    void leased(String model) {
        inFlight.computeIfAbsent(model, k -> new AtomicInteger()).incrementAndGet();
        routed.increment();
    }

    void released(String model) {
        inFlight.get(model).decrementAndGet();
    }

    public String id() { return id; }

    public Backend backend() { return backend; }

    public URI url() { return url; }

    /** The bearer token the tracker presents to this node (the node token, or a backend's API key), or null. */
    public String bearer() { return bearer; }

    public Map<String, ModelCapacity> models() { return models; }

    /** The span it serves as a later stage of a route (never routed client requests), or null. */
    public StageSpan stage() { return stage; }

    public Instant lastReport() { return lastReport; }

    /** When the last report arrived ({@link System#nanoTime}), or 0 before the first. */
    public long lastReportNanos() { return lastReportNanos; }

    /** Whether a connection to the node failed since its last report. */
    public boolean broken() { return brokenAtNanos != 0; }

    public long routedTotal() { return routed.sum(); }

    public long failuresTotal() { return failures.sum(); }
}
