package dgr.tracker.ledger;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Asks a dgr node for its exact accounting of request ids ({@code POST /v1/accounting}, node token): what
 * recovery settles orphans from, and what a stream cut by its client is billed at (the node computed more
 * than the relay saw, and never sent its usage chunk).
 */
public final class NodeAccountingClient {
    private static final System.Logger LOG = System.getLogger(NodeAccountingClient.class.getName());

    /**
     * One node's accounting of one request id, as the request's usage (a resumed session counts the tokens it
     * resumed from as generated, and the prompt it processed again as recomputed); {@code finishReason} null
     * while it still runs.
     */
    public record NodeRecord(String node, String requestId, long promptTokens, long cachedTokens, long generatedTokens,
                             long deliveredTokens, long recomputedTokens, String finishReason, long startedMs,
                             long endedMs) {
        public boolean finished() { return finishReason != null; }
    }

    private final ObjectMapper mapper = new ObjectMapper();
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(2)).build();

    /** What the node at {@code baseUrl} knows of these ids (empty when it is unreachable or refuses). */
    public List<NodeRecord> ask(String nodeId, String baseUrl, String bearer, List<String> ids) {
        return answer(nodeId, baseUrl, bearer, ids).orElse(List.of());
    }

    /**
     * The node's answer for these ids (the records it knows; an id it does not know is absent), or empty when
     * it did not answer (unreachable, refused, timed out): then it may still know them.
     */
    public Optional<List<NodeRecord>> answer(String nodeId, String baseUrl, String bearer, List<String> ids) {
        try {
            ObjectNode body = mapper.createObjectNode();
            ids.forEach(body.putArray("request_ids")::add);
            String base = baseUrl.endsWith("/") ? baseUrl.substring(0, baseUrl.length() - 1) : baseUrl;
            HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + "/v1/accounting"))
                    .timeout(Duration.ofSeconds(10)).header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofByteArray(mapper.writeValueAsBytes(body)));
            if (bearer != null) b.header("Authorization", "Bearer " + bearer);
            HttpResponse<byte[]> r = http.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
            if (r.statusCode() != 200) {
                LOG.log(System.Logger.Level.WARNING, "node " + nodeId + " answered HTTP " + r.statusCode()
                        + " to POST /v1/accounting");
                return Optional.empty();
            }
            List<NodeRecord> out = new ArrayList<>();
            for (JsonNode rec : mapper.readTree(r.body()).path("requests")) {
                out.add(new NodeRecord(nodeId, rec.path("request_id").asText(), rec.path("prompt_tokens").asLong(),
                        rec.path("cached_tokens").asLong(), rec.path("generated_tokens").asLong(),
                        rec.path("delivered_tokens").asLong(), rec.path("recomputed_tokens").asLong(),
                        rec.path("finish_reason").isNull() ? null : rec.path("finish_reason").asText(),
                        rec.path("started_ms").asLong(), rec.path("ended_ms").asLong(-1)));
            }
            return Optional.of(out);
        } catch (IOException e) {
            LOG.log(System.Logger.Level.WARNING, "node " + nodeId + " unreachable for its accounting: " + e);
            return Optional.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.empty();
        }
    }

    /**
     * The node's final accounting of one request, polled until its session has ended (a cut stream's ends at
     * the node's next write and scheduler iteration, milliseconds later) or {@code timeout} passes.
     */
    public Optional<NodeRecord> awaitFinished(String nodeId, String baseUrl, String bearer, String requestId,
                                              Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            List<NodeRecord> recs = ask(nodeId, baseUrl, bearer, List.of(requestId));
            if (!recs.isEmpty() && recs.getFirst().finished()) return Optional.of(recs.getFirst());
            if (System.nanoTime() > deadline) return Optional.empty();
            Thread.sleep(10);
        }
    }

    /**
     * For a node that may be down or restarting (from its journal): asks every half second until it reports the
     * request finished, or answers without it (it died with the session running: nothing more will come), or
     * {@code timeout} passes.
     */
    public Optional<NodeRecord> awaitFinal(String nodeId, String baseUrl, String bearer, String requestId,
                                           Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            Optional<List<NodeRecord>> a = answer(nodeId, baseUrl, bearer, List.of(requestId));
            if (a.isPresent() && a.get().isEmpty()) return Optional.empty();
            if (a.isPresent() && a.get().getFirst().finished()) return Optional.of(a.get().getFirst());
            if (System.nanoTime() > deadline) return Optional.empty();
            Thread.sleep(500);
        }
    }
}
