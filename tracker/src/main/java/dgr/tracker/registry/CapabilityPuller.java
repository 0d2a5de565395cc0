package dgr.tracker.registry;

import com.fasterxml.jackson.databind.JsonNode;
import dgr.tracker.metrics.TrackerMetrics;
import dgr.tracker.relay.NodeClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The tracker's pull of a dgr node's {@code GET /v1/capabilities}, beside the reports nodes push with
 * their heartbeats, when what was pushed is not enough (docs/tracker.md, "Node–tracker protocol"):
 * <ul>
 *   <li><b>join</b>: the first heartbeat names a URL; the tracker checks that the URL answers as that
 *       node before trusting it with requests, and is out of routing if it does not;</li>
 *   <li><b>stale</b>: a heartbeat {@link #STALE_AFTER} late, or half the heartbeat timeout (heartbeats come
 *       every second; the node is out after 3 s): a node that answers is in routing on the pulled report; one
 *       whose connection is refused (a killed process) is out at once, not after the full heartbeat timeout;</li>
 *   <li><b>incomplete</b>: a report without recipe or engine, or measured without its recommendation's
 *       speeds, pulled again at most every {@link #RETRY_INCOMPLETE};</li>
 *   <li><b>unknown_model</b>: a request names a model (or a resumed stream a recipe) no node reported:
 *       every dgr node is asked at once before the tracker answers 404 (at most once a second).</li>
 * </ul>
 * A pull whose connection is refused (nothing listens: a killed process, a wrong URL) or whose report names
 * another node takes the node out of routing until its next report; any other failure (a timeout, a reset,
 * a node busy under load) leaves its health to the heartbeat timeout. Pulls use a client of their own, apart from the relay's connections.
 */
public final class CapabilityPuller implements AutoCloseable {
    /** A heartbeat this late is pulled (or half the heartbeat timeout, when that is shorter). */
    public static final Duration STALE_AFTER = Duration.ofMillis(1500);
    public static final Duration TIMEOUT = Duration.ofSeconds(2);
    static final Duration RETRY_INCOMPLETE = Duration.ofSeconds(5);
    private static final Duration UNKNOWN_MODEL_EVERY = Duration.ofSeconds(1);
    private static final System.Logger LOG = System.getLogger(CapabilityPuller.class.getName());

    private final NodeRegistry registry;
    private final NodeClient client;
    private final TrackerMetrics metrics;
    private final long staleAfterNanos;
    /** Per node: when the last pull started (nanoTime). */
    private final Map<String, Long> lastPull = new ConcurrentHashMap<>();
    private final AtomicLong lastPullAll = new AtomicLong(System.nanoTime() - UNKNOWN_MODEL_EVERY.toNanos());
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "dgr-tracker-capability-puller");
        t.setDaemon(true);
        return t;
    });

    public CapabilityPuller(NodeRegistry registry, NodeClient client, TrackerMetrics metrics) {
        this.registry = registry;
        this.client = client;
        this.metrics = metrics;
        this.staleAfterNanos = Math.min(STALE_AFTER.toNanos(), registry.heartbeatTimeout().toNanos() / 2);
        timer.scheduleWithFixedDelay(this::pullStale, 250, 250, TimeUnit.MILLISECONDS);
    }

    /** A dgr node's heartbeat was recorded: pull when it joined with it or its report lacks data. */
    public void reported(String nodeId, boolean joined, Map<String, ModelCapacity> models) {
        registry.find(nodeId).ifPresent(n -> {
            if (joined) pullAsync(n, "join");
            else if (CapabilityReports.incomplete(models) && since(n) > RETRY_INCOMPLETE.toNanos()) pullAsync(n, "incomplete");
        });
    }

    /**
     * A request named a model or recipe no node reported: asks every dgr node now and returns whether it
     * did (false when it did within the last second, so a stream of bad model names costs nodes nothing).
     */
    public boolean pullAllForUnknownModel() throws InterruptedException {
        long now = System.nanoTime();
        long last = lastPullAll.get();
        if (now - last < UNKNOWN_MODEL_EVERY.toNanos() || !lastPullAll.compareAndSet(last, now)) return false;
        List<Thread> threads = new ArrayList<>();
        for (RegisteredNode n : registry.all()) {
            if (n.backend() != Backend.DGR) continue;
            lastPull.put(n.id(), System.nanoTime());
            threads.add(Thread.startVirtualThread(() -> pull(n, "unknown_model")));
        }
        for (Thread t : threads) t.join(TIMEOUT.toMillis() + 500);
        return true;
    }

    private void pullStale() {
        long now = System.nanoTime();
        for (RegisteredNode n : registry.all()) {
            if (n.backend() != Backend.DGR || n.broken()) continue;
            long age = now - n.lastReportNanos();
            // Once per late heartbeat: not again until a report (pushed or pulled) arrived after this pull.
            Long pulled = lastPull.get(n.id());
            if (age > staleAfterNanos && (pulled == null || pulled - n.lastReportNanos() < 0)) pullAsync(n, "stale");
        }
    }

    private long since(RegisteredNode n) {
        Long t = lastPull.get(n.id());
        return t == null ? Long.MAX_VALUE : System.nanoTime() - t;
    }

    private void pullAsync(RegisteredNode n, String reason) {
        lastPull.put(n.id(), System.nanoTime());
        Thread.startVirtualThread(() -> pull(n, reason));
    }

    /** One pull: the report replaces what the node pushed; a failure takes the node out of routing. */
    private void pull(RegisteredNode n, String reason) {
        try {
            JsonNode caps = client.getJson(n.url(), "v1/capabilities", n.bearer(), TIMEOUT);
            String id = CapabilityReports.nodeId(caps);
            if (!id.equals(n.id())) {
                registry.markBroken(n, n.url() + " answers as node '" + id + "'");
                metrics.capabilityPull(reason, false);
                return;
            }
            if (registry.find(n.id()).orElse(null) != n) return; // it left meanwhile
            registry.report(n.id(), Backend.DGR, n.url(), n.bearer(), CapabilityReports.models(caps), CapabilityReports.stage(caps));
            metrics.capabilityPull(reason, true);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (java.net.ConnectException e) {
            // Nothing listens there: a killed process, a wrong URL. Out of routing until it reports again.
            LOG.log(System.Logger.Level.WARNING, "node " + n.id() + ": GET /v1/capabilities (" + reason + ") refused: " + e);
            registry.markBroken(n, "GET /v1/capabilities (" + reason + ") failed: " + e);
            metrics.capabilityPull(reason, false);
        } catch (Exception e) {
            // A timeout, a reset, a bad answer from a node that is there but busy: its heartbeats decide.
            LOG.log(System.Logger.Level.WARNING, "node " + n.id() + ": GET /v1/capabilities (" + reason + ") failed: " + e
                    + "; its heartbeats decide");
            metrics.capabilityPull(reason, false);
        }
    }

    @Override
    public void close() {
        timer.shutdownNow();
        client.close();
    }
}
