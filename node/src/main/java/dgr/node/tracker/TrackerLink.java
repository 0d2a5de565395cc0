package dgr.node.tracker;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * A node's side of the node–tracker channel ({@code dgr serve --tracker URL --node-token T}): joins the
 * tracker and stays in its routing by pushing the capability report (models, recipes, saturation
 * recommendations, live load) with its own URL every second to {@code POST /v1/nodes/heartbeat}; leaves
 * with {@code DELETE /v1/nodes/ID} when the node stops. A tracker that is down or restarting is simply
 * tried again at the next beat; a refused token is logged once, plainly.
 */
public final class TrackerLink implements AutoCloseable {
    public static final Duration INTERVAL = Duration.ofSeconds(1);
    private static final System.Logger LOG = System.getLogger(TrackerLink.class.getName());

    private final URI tracker;
    private final String nodeToken;
    private final URI self;
    private final Supplier<JsonNode> capabilities;
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(INTERVAL).build();
    private final ObjectMapper mapper = new ObjectMapper();
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "dgr-tracker-heartbeat");
        t.setDaemon(true);
        return t;
    });
    private volatile String nodeId;
    private volatile String lastProblem;

    private TrackerLink(URI tracker, String nodeToken, URI self, Supplier<JsonNode> capabilities) {
        this.tracker = tracker;
        this.nodeToken = nodeToken;
        this.self = self;
        this.capabilities = capabilities;
    }

    /**
     * Starts beating at once.
     *
     * @param tracker      the tracker's base URL, e.g. {@code http://10.0.0.5:8000}
     * @param self         this node's base URL as the tracker should reach it
     * @param capabilities the node's capability report, built fresh at every beat
     */
    public static TrackerLink start(URI tracker, String nodeToken, URI self, Supplier<JsonNode> capabilities) {
        TrackerTrust.of(nodeToken); // the same blank check as the trust the node keeps
        TrackerLink link = new TrackerLink(baseUrl(tracker), nodeToken, self, capabilities);
        link.timer.scheduleAtFixedRate(link::beat, 0, INTERVAL.toMillis(), TimeUnit.MILLISECONDS);
        return link;
    }

    /** The tracker's base URL ending in {@code /} (a trailing {@code /v1} dropped); a URL that is not http(s) is refused. */
    public static URI baseUrl(URI tracker) {
        String scheme = tracker.getScheme();
        if (!("http".equals(scheme) || "https".equals(scheme)) || tracker.getHost() == null) {
            throw new IllegalArgumentException("--tracker must be an http(s) URL such as http://HOST:8000, got '" + tracker + "'");
        }
        return URI.create(tracker.toString().replaceAll("/+$", "").replaceAll("/v1$", "") + "/");
    }

    /** The id the tracker knows this node by, once a heartbeat was accepted. */
    public String nodeId() { return nodeId; }

    private void beat() {
        try {
            ObjectNode body = JsonNodeFactory.instance.objectNode();
            body.put("url", self.toString());
            body.set("capabilities", capabilities.get());
            HttpRequest req = HttpRequest.newBuilder(tracker.resolve("v1/nodes/heartbeat"))
                    .timeout(INTERVAL.multipliedBy(2))
                    .header("Authorization", "Bearer " + nodeToken)
                    .header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofByteArray(mapper.writeValueAsBytes(body)))
                    .build();
            HttpResponse<byte[]> res = http.send(req, HttpResponse.BodyHandlers.ofByteArray());
            if (res.statusCode() == 200) {
                JsonNode answer = mapper.readTree(res.body());
                nodeId = answer.path("node_id").asText(null);
                if (answer.path("joined").asBoolean(false) || lastProblem != null) {
                    LOG.log(System.Logger.Level.INFO, "joined tracker " + tracker + " as " + nodeId);
                }
                lastProblem = null;
            } else {
                problem("tracker " + tracker + " refused the heartbeat (HTTP " + res.statusCode() + "): "
                        + new String(res.body(), StandardCharsets.UTF_8));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (IOException | RuntimeException e) {
            problem("tracker " + tracker + " unreachable: " + e);
        }
    }

    /** Logs a problem once, not at every beat, until a heartbeat succeeds again. */
    private void problem(String message) {
        if (!message.equals(lastProblem)) LOG.log(System.Logger.Level.WARNING, message);
        lastProblem = message;
    }

    /** Stops beating and tells the tracker the node leaves (best effort: a gone tracker forgets it by timeout). */
    @Override
    public void close() {
        timer.shutdownNow();
        try {
            // A beat in flight must land before the leave, or it would join the node again.
            timer.awaitTermination(INTERVAL.toMillis() * 2, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        String id = nodeId;
        if (id != null) {
            try {
                HttpRequest req = HttpRequest.newBuilder(tracker.resolve("v1/nodes/"
                                + URLEncoder.encode(id, StandardCharsets.UTF_8)))
                        .timeout(INTERVAL).header("Authorization", "Bearer " + nodeToken).DELETE().build();
                http.send(req, HttpResponse.BodyHandlers.discarding());
            } catch (IOException e) {
                LOG.log(System.Logger.Level.DEBUG, "could not tell tracker " + tracker + " this node leaves: " + e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        http.shutdownNow();
    }
}
