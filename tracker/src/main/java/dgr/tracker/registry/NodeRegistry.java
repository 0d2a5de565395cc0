package dgr.tracker.registry;

import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The nodes a tracker routes to. A node joins with its first report, stays while it reports (a dgr
 * node's heartbeat, an OpenAI backend's polled {@code /v1/models}) and leaves when it says so or an
 * operator removes it. Health is computed when asked, from the last report's age and broken
 * connections, so no sweeper thread is needed and a dead node is out of routing the moment its
 * heartbeat is late.
 */
public final class NodeRegistry {
    private final Map<String, RegisteredNode> nodes = new ConcurrentHashMap<>();
    private final Duration heartbeatTimeout;
    private final Clock clock;
    private final List<Runnable> onCapacityChange = new CopyOnWriteArrayList<>();
    private final List<java.util.function.Consumer<Sighting>> onSighting = new CopyOnWriteArrayList<>();

    /** A node seen at an address for the first time, or at a new one. */
    public record Sighting(String id, Backend backend, URI url) {}

    public NodeRegistry(Duration heartbeatTimeout, Clock clock) {
        this.heartbeatTimeout = heartbeatTimeout;
        this.clock = clock;
    }

    /** Called when capacity may have grown (a report, a lease ended), so waiting requests look again. */
    public void onCapacityChange(Runnable r) { onCapacityChange.add(r); }

    /**
     * Called with a node that joins or moves, before its report makes it routable: the ledger's roster
     * writes it down then, so a tracker killed right after a join still knows whom to ask on restart
     * (a roster written once a second missed a node that joined 0.7 s before a kill -9, and the rows it
     * served were settled at 0). A listener's failure is the listener's to report.
     */
    public void onSighting(java.util.function.Consumer<Sighting> c) { onSighting.add(c); }

    /** Records a report of a node that is no stage of a route; the node joins if it is new. Returns whether it was new. */
    public boolean report(String id, Backend backend, URI url, String bearer, Map<String, ModelCapacity> models) {
        return report(id, backend, url, bearer, models, null);
    }

    /** As above, with the span it serves when it is a later stage of a route ({@code stage}, else null). */
    public boolean report(String id, Backend backend, URI url, String bearer, Map<String, ModelCapacity> models, StageSpan stage) {
        boolean[] joined = {false};
        RegisteredNode n = nodes.computeIfAbsent(id, k -> {
            joined[0] = true;
            return new RegisteredNode(k, backend, url);
        });
        if (n.backend() != backend) {
            throw new IllegalArgumentException("node id '" + id + "' is already registered as a " + n.backend().wireName()
                    + " backend");
        }
        if (joined[0] || !url.equals(n.url())) for (var c : onSighting) c.accept(new Sighting(id, backend, url));
        n.report(url, bearer, models, stage, System.nanoTime(), clock.instant());
        capacityChanged();
        return joined[0];
    }

    public boolean remove(String id) {
        boolean removed = nodes.remove(id) != null;
        if (removed) capacityChanged();
        return removed;
    }

    public void markBroken(RegisteredNode n, String reason) { n.markBroken(System.nanoTime(), reason); }

    public Optional<RegisteredNode> find(String id) { return Optional.ofNullable(nodes.get(id)); }

    /** Every node, by id. */
    public List<RegisteredNode> all() {
        List<RegisteredNode> list = new ArrayList<>(nodes.values());
        list.sort(Comparator.comparing(RegisteredNode::id));
        return list;
    }

    public boolean healthy(RegisteredNode n) { return n.healthy(System.nanoTime(), heartbeatTimeout); }

    public String unhealthyReason(RegisteredNode n) { return n.unhealthyReason(System.nanoTime(), heartbeatTimeout); }

    /** Healthy nodes serving the model (and, when given, with this {@link ModelCapacity#resumeKey}), by id. */
    public List<RegisteredNode> serving(String model, String resumeKey) {
        List<RegisteredNode> out = new ArrayList<>();
        for (RegisteredNode n : all()) {
            ModelCapacity m = n.models().get(model);
            if (m == null || !healthy(n)) continue;
            if (resumeKey != null && !resumeKey.equals(m.resumeKey())) continue;
            out.add(n);
        }
        return out;
    }

    /**
     * Healthy later stages of the model with recipe {@code recipe} (its whole-model recipe id), those serving
     * exactly {@code [first, end)} when {@code first >= 0}, most headroom first (then by span and id).
     */
    public List<RegisteredNode> stages(String recipe, int first, int end) {
        List<RegisteredNode> out = new ArrayList<>();
        for (RegisteredNode n : all()) {
            StageSpan s = n.stage();
            if (s == null || !healthy(n) || !s.modelRecipeId().equals(recipe)) continue;
            if (first >= 0 && !s.serves(recipe, first, end)) continue;
            out.add(n);
        }
        out.sort(Comparator.comparingInt((RegisteredNode n) -> n.stage().firstLayer())
                .thenComparing(Comparator.comparingInt((RegisteredNode n) -> n.stage().headroom()).reversed())
                .thenComparing(RegisteredNode::id));
        return out;
    }

    public void leased(RegisteredNode n, String model) { n.leased(model); }

    public void released(RegisteredNode n, String model) {
        n.released(model);
        capacityChanged();
    }

    public Duration heartbeatTimeout() { return heartbeatTimeout; }

    private void capacityChanged() {
        for (Runnable r : onCapacityChange) r.run();
    }
}
