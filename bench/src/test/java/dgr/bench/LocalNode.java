package dgr.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dgr.engine.EngineOptions;
import dgr.node.ModelSpec;
import dgr.node.NodeConfig;
import dgr.node.NodeServer;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.List;

/** A real dgr node in this JVM on 127.0.0.1 (ephemeral port), and plain GETs against it. */
final class LocalNode {
    static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient CLIENT = HttpClient.newHttpClient();

    private LocalNode() {}

    /** One engine thread per model: two cores are shared by the node, the benchmark and the tests. */
    static NodeConfig config(List<ModelSpec> models) {
        return NodeConfig.of(models).withAddress("127.0.0.1", 0).withEngine(EngineOptions.defaults().withThreads(1));
    }

    static NodeServer start(NodeConfig config) {
        try {
            return NodeServer.start(config);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    static String url(NodeServer node) { return "http://127.0.0.1:" + node.port(); }

    static String get(NodeServer node, String path) throws IOException, InterruptedException {
        HttpResponse<String> r = CLIENT.send(HttpRequest.newBuilder(URI.create(url(node) + path)).GET().build(),
                HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200) throw new IllegalStateException("GET " + path + ": HTTP " + r.statusCode());
        return r.body();
    }

    static JsonNode capabilities(NodeServer node) throws IOException, InterruptedException {
        return JSON.readTree(get(node, "/v1/capabilities"));
    }

    static Path synth(Path dir, dgr.gguf.synth.SynthPreset preset) {
        Path p = dir.resolve(preset.name() + "-q4_0.gguf");
        dgr.gguf.synth.Synth.write(preset, dgr.gguf.synth.QuantMix.parse("Q4_0"), 42, p);
        return p;
    }
}
