package dgr.tracker.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dgr.engine.EngineOptions;
import dgr.gguf.synth.QuantMix;
import dgr.gguf.synth.Synth;
import dgr.gguf.synth.SynthPreset;
import dgr.node.ModelSpec;
import dgr.node.NodeConfig;
import dgr.node.NodeServer;
import dgr.runtime.SchedulerConfig;
import dgr.tracker.TrackerConfig;
import dgr.tracker.TrackerServer;
import dgr.tracker.ledger.Ledger;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A tracker and real dgr nodes in this JVM, on free 127.0.0.1 ports, talking over loopback HTTP as they
 * would across machines. Nodes join with the node token and are awaited in the tracker's routing.
 */
public final class Cluster implements AutoCloseable {
    public static final String MODEL = "llama-tiny";
    public static final String NODE_TOKEN = "node-secret";
    public static final String ADMIN_TOKEN = "admin-secret";
    private static Path model;

    public final TrackerServer tracker;
    public final List<NodeServer> nodes = new ArrayList<>();
    public final HttpClient http = HttpClient.newHttpClient();
    public final ObjectMapper mapper = new ObjectMapper();

    public Cluster(TrackerConfig config, Ledger ledger) {
        this.tracker = TrackerServer.start(config.withAddress("127.0.0.1", 0).withTokens(NODE_TOKEN, ADMIN_TOKEN), ledger);
    }

    public static TrackerConfig config() { return TrackerConfig.defaults(); }

    /** llama-tiny Q4_0, synthesized once per test JVM. */
    public static synchronized Path model() {
        if (model == null) {
            try {
                Path dir = Files.createTempDirectory("dgr-tracker-test");
                dir.toFile().deleteOnExit();
                model = dir.resolve("llama-tiny-Q4_0.gguf");
                Synth.write(SynthPreset.LLAMA_TINY, QuantMix.parse("Q4_0"), 42, model);
                model.toFile().deleteOnExit();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return model;
    }

    /** A node config over llama-tiny: loopback, a free port, one engine thread, at most {@code maxRunning} sessions. */
    public static NodeConfig node(String id, int maxRunning) {
        return NodeConfig.of(List.of(new ModelSpec(model(), MODEL))).withAddress("127.0.0.1", 0).withNodeId(id)
                .withEngine(EngineOptions.defaults().withThreads(1))
                .withScheduler(SchedulerConfig.defaults().withBatch(16, 64)).withMaxBatchSessions(maxRunning)
                .withNodeToken(NODE_TOKEN);
    }

    /** Starts a node, joins it to the tracker and waits until the tracker routes to it. */
    public NodeServer join(NodeConfig config) {
        NodeServer n;
        try {
            n = NodeServer.start(config);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        nodes.add(n);
        n.joinTracker(trackerUrl());
        Await.until("node " + config.nodeId() + " in routing", Duration.ofSeconds(20), () -> tracker.tracker().registry()
                .find(config.nodeId()).map(r -> tracker.tracker().registry().healthy(r)).orElse(false));
        return n;
    }

    public URI trackerUrl() { return URI.create("http://127.0.0.1:" + tracker.port()); }

    public static URI nodeUrl(NodeServer n) { return URI.create("http://127.0.0.1:" + n.port()); }

    public HttpResponse<String> post(URI base, String path, String body, String... headers) {
        HttpRequest.Builder b = HttpRequest.newBuilder(base.resolve(path)).timeout(Duration.ofSeconds(60))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body));
        if (headers.length > 0) b.headers(headers);
        return send(b.build());
    }

    public HttpResponse<String> get(URI base, String path, String... headers) {
        HttpRequest.Builder b = HttpRequest.newBuilder(base.resolve(path)).timeout(Duration.ofSeconds(30)).GET();
        if (headers.length > 0) b.headers(headers);
        return send(b.build());
    }

    private HttpResponse<String> send(HttpRequest r) {
        try {
            return http.send(r, HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    public JsonNode json(String s) {
        try {
            return mapper.readTree(s);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The text of an SSE completion stream's chunks, in order, and the data events seen. */
    public static String streamedText(String sse, ObjectMapper mapper) {
        StringBuilder text = new StringBuilder();
        for (String line : sse.split("\n")) {
            if (!line.startsWith("data: ") || line.equals("data: [DONE]")) continue;
            try {
                JsonNode c = mapper.readTree(line.substring(6));
                JsonNode ch = c.path("choices").path(0);
                text.append(ch.has("text") ? ch.path("text").asText("") : ch.path("delta").path("content").asText(""));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return text.toString();
    }

    @Override
    public void close() {
        for (NodeServer n : nodes) n.close();
        tracker.close();
    }
}
