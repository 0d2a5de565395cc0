package dgr.node.tracker;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A head's question to its tracker: which live later stages serve spans of its model
 * ({@code GET /v1/stages?recipe=R}, node token; docs/tracker.md). The answer comes most headroom first.
 */
public final class StageDirectory implements AutoCloseable {
    /** Largest answer read: thousands of stages, far more than a cluster has. */
    private static final int MAX_ANSWER_BYTES = 1 << 20;
    private static final Duration TIMEOUT = Duration.ofSeconds(2);

    /** One stage as the tracker offers it. */
    public record OfferedStage(String nodeId, String address, int firstLayer, int endLayer, String modelRecipeId,
                               String boundarySchemaId, String stateLayoutId, String engine, int headroom) {}

    private final URI tracker;
    private final String nodeToken;
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(TIMEOUT).build();
    private final ObjectMapper mapper = new ObjectMapper();

    public StageDirectory(URI tracker, String nodeToken) {
        this.tracker = TrackerLink.baseUrl(tracker);
        TrackerTrust.of(nodeToken);
        this.nodeToken = nodeToken;
    }

    public URI tracker() { return tracker; }

    /** The live later stages of the model with this whole-model recipe id; throws when the tracker does not answer so. */
    public List<OfferedStage> stages(String modelRecipeId) throws IOException, InterruptedException {
        HttpRequest req = HttpRequest.newBuilder(tracker.resolve("v1/stages?recipe=" + URLEncoder.encode(modelRecipeId, StandardCharsets.UTF_8)))
                .timeout(TIMEOUT).header("Authorization", "Bearer " + nodeToken).GET().build();
        HttpResponse<InputStream> res = http.send(req, HttpResponse.BodyHandlers.ofInputStream());
        byte[] body;
        try (InputStream in = res.body()) {
            body = in.readNBytes(MAX_ANSWER_BYTES + 1);
        }
        if (body.length > MAX_ANSWER_BYTES) throw new IOException("the tracker's stage list is over " + MAX_ANSWER_BYTES + " bytes");
        if (res.statusCode() != 200) {
            throw new IOException("tracker " + tracker + " answered GET /v1/stages with HTTP " + res.statusCode() + ": "
                    + new String(body, 0, Math.min(body.length, 500), StandardCharsets.UTF_8));
        }
        List<OfferedStage> out = new ArrayList<>();
        for (JsonNode s : mapper.readTree(body).path("data")) {
            JsonNode span = s.path("span");
            out.add(new OfferedStage(s.path("node_id").asText(""), s.path("address").asText(""), span.path(0).asInt(-1),
                    span.path(1).asInt(-1), s.path("model_recipe_id").asText(""), s.path("boundary_schema_id").asText(""),
                    s.path("state_layout_id").asText(""), s.path("engine").asText(""), s.path("headroom").asInt(0)));
        }
        return out;
    }

    @Override
    public void close() { http.shutdownNow(); }
}
