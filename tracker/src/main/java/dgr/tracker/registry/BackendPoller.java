package dgr.tracker.registry;

import com.fasterxml.jackson.databind.JsonNode;
import dgr.tracker.relay.NodeClient;
import java.net.URI;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Keeps OpenAI backends (servers that are not dgr) in the registry: an operator registers one by URL
 * with the saturation.json {@code dgr bench --url} measured against it, and this poller GETs its
 * {@code /v1/models} about every second. A successful poll is the backend's heartbeat (models it lists,
 * capacity from the saturation file); a failed one takes it out of routing until the next success.
 */
public final class BackendPoller implements AutoCloseable {
    public static final Duration PERIOD = Duration.ofSeconds(1);

    /** A registered backend: where, how to authenticate, and the capacity per model it was registered with. */
    public record Registration(String id, URI url, String apiKey, Map<String, Capacity> capacityByModel,
                               Capacity fallback) {}

    /** A model's capacity from the saturation file, or the operator's configured limit when none matched. */
    public record Capacity(int recommendedMaxConcurrency, boolean measured, String source, double sessionThroughput,
                           double outputThroughput) {}

    private final NodeRegistry registry;
    private final NodeClient client;
    private final Map<String, Registration> backends = new ConcurrentHashMap<>();
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "dgr-tracker-backend-poller");
        t.setDaemon(true);
        return t;
    });

    public BackendPoller(NodeRegistry registry, NodeClient client) {
        this.registry = registry;
        this.client = client;
        timer.scheduleAtFixedRate(this::pollAll, PERIOD.toMillis(), PERIOD.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** Registers a backend and polls it once at once: it serves when this returns true. */
    public boolean register(Registration r) {
        backends.put(r.id(), r);
        return poll(r);
    }

    public boolean unregister(String id) {
        return backends.remove(id) != null;
    }

    private void pollAll() {
        for (Registration r : List.copyOf(backends.values())) {
            Thread.startVirtualThread(() -> poll(r));
        }
    }

    private boolean poll(Registration r) {
        try {
            JsonNode list = client.getJson(r.url(), "v1/models", r.apiKey(), PERIOD);
            Map<String, ModelCapacity> models = new LinkedHashMap<>();
            for (JsonNode m : list.path("data")) {
                String id = m.path("id").asText(null);
                if (id == null || id.isBlank()) continue;
                Capacity c = r.capacityByModel().getOrDefault(id, r.fallback());
                models.put(id, new ModelCapacity(id, null, c.recommendedMaxConcurrency(), c.measured(), c.source(),
                        0, 0, 0, null, c.sessionThroughput(), c.outputThroughput()));
            }
            if (!backends.containsKey(r.id())) return false; // unregistered meanwhile
            registry.report(r.id(), Backend.OPENAI, r.url(), r.apiKey(), models);
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        } catch (Exception e) {
            registry.find(r.id()).ifPresent(n -> registry.markBroken(n, "GET /v1/models failed: " + e));
            return false;
        }
    }

    @Override
    public void close() { timer.shutdownNow(); }
}
