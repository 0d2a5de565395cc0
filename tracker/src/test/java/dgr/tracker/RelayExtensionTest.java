package dgr.tracker;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dgr.node.NodeServer;
import dgr.tracker.cluster.Cluster;
import dgr.tracker.cluster.InMemoryLedger;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The node's side of the relay extension (docs/node.md): only a request with the node token gets token
 * ids, names a tenant and request id, or resumes a session; a resumed session streams exactly the rest of
 * the original stream, from any point.
 */
class RelayExtensionTest {
    private static Cluster cluster;
    private static NodeServer node;
    private static final String TOKEN = "Bearer " + Cluster.NODE_TOKEN;

    @BeforeAll
    static void start() {
        cluster = new Cluster(Cluster.config(), new InMemoryLedger());
        node = cluster.join(Cluster.node("n", 4).withKeys(List.of("sk-client"), null));
    }

    @AfterAll
    static void stop() {
        cluster.close();
    }

    private static ObjectNode request(int maxTokens) {
        return (ObjectNode) cluster.json("{\"model\":\"llama-tiny\",\"prompt\":\"The tracker\",\"max_tokens\":" + maxTokens
                + ",\"stream\":true,\"temperature\":1.1,\"top_p\":0.9,\"seed\":11,\"frequency_penalty\":0.8,"
                + "\"stop\":[\"ab\",\"q\"],\"stream_options\":{\"include_usage\":true}}");
    }

    private static List<JsonNode> events(HttpResponse<String> r) {
        List<JsonNode> out = new ArrayList<>();
        for (String line : r.body().split("\n")) {
            if (line.startsWith("data: {")) out.add(cluster.json(line.substring(6)));
        }
        return out;
    }

    private static HttpResponse<String> post(ObjectNode body, String... headers) {
        return cluster.post(Cluster.nodeUrl(node), "v1/completions", body.toString(), headers);
    }

    @Test
    void onlyTheTrackerGetsTokenIdsAndNamesTenantAndRequestId() {
        ObjectNode b = request(8);
        b.putObject("dgr").put("token_ids", true);
        HttpResponse<String> client = post(b, "Authorization", "Bearer sk-client", "X-Dgr-Tenant", "mallory");
        assertThat(client.statusCode()).isEqualTo(200);
        assertThat(client.body()).doesNotContain("\"dgr\"");
        assertThat(post(b, "Authorization", "Bearer not-the-node-token").statusCode()).isEqualTo(401);

        HttpResponse<String> tracker = post(b, "Authorization", TOKEN, "X-Dgr-Tenant", "alice", "X-Dgr-Request-Id", "req-1");
        List<JsonNode> ev = events(tracker);
        long withIds = ev.stream().filter(e -> e.path("dgr").has("token_id")).count();
        JsonNode usage = ev.getLast();
        assertThat(withIds).isEqualTo(usage.path("usage").path("completion_tokens").asLong());
        assertThat(usage.path("dgr").path("request_id").asText()).isEqualTo("req-1");
        assertThat(usage.path("dgr").path("tenant").asText()).isEqualTo("alice");
    }

    @Test
    void aSessionResumedFromAnyPointStreamsExactlyTheRestOfTheOriginal() {
        ObjectNode b = request(30);
        b.putObject("dgr").put("token_ids", true);
        List<JsonNode> full = events(post(b, "Authorization", TOKEN));
        List<Integer> ids = new ArrayList<>();
        List<String> texts = new ArrayList<>();
        for (JsonNode e : full) {
            if (!e.path("dgr").has("token_id")) continue;
            ids.add(e.path("dgr").path("token_id").asInt());
            texts.add(e.path("choices").path(0).path("text").asText());
        }
        JsonNode fullUsage = full.getLast().path("usage");
        String finish = full.get(full.size() - 2).path("choices").path(0).path("finish_reason").asText();
        assertThat(ids).isNotEmpty();
        for (int k : new int[] {0, 1, 3, ids.size() / 2, ids.size() - 1, ids.size()}) {
            ObjectNode r = request(30);
            ObjectNode resume = r.putObject("dgr").put("token_ids", true).putObject("resume");
            ArrayNode delivered = resume.putArray("token_ids");
            for (int id : ids.subList(0, k)) delivered.add(id);
            resume.put("sampler_step", k);
            List<JsonNode> rest = events(post(r, "Authorization", TOKEN));
            List<Integer> restIds = new ArrayList<>();
            List<String> restTexts = new ArrayList<>();
            for (JsonNode e : rest) {
                if (!e.path("dgr").has("token_id")) continue;
                restIds.add(e.path("dgr").path("token_id").asInt());
                restTexts.add(e.path("choices").path(0).path("text").asText());
            }
            assertThat(restIds).as("token ids resumed at " + k).isEqualTo(ids.subList(k, ids.size()));
            assertThat(restTexts).as("texts resumed at " + k).isEqualTo(texts.subList(k, texts.size()));
            assertThat(rest.get(rest.size() - 2).path("choices").path(0).path("finish_reason").asText()).isEqualTo(finish);
            JsonNode u = rest.getLast().path("usage");
            assertThat(u.path("prompt_tokens")).as("usage of the whole request").isEqualTo(fullUsage.path("prompt_tokens"));
            assertThat(u.path("completion_tokens")).isEqualTo(fullUsage.path("completion_tokens"));
        }
    }

    @Test
    void aResumeThatContradictsTheRequestIsRefusedNamingTheField() {
        ObjectNode r = request(2);
        r.putObject("dgr").putObject("resume").putArray("token_ids").add(1).add(2).add(3);
        HttpResponse<String> tooMany = post(r, "Authorization", TOKEN);
        assertThat(tooMany.statusCode()).isEqualTo(400);
        assertThat(cluster.json(tooMany.body()).path("error").path("param").asText()).isEqualTo("dgr.resume.token_ids");
        ObjectNode neg = request(8);
        neg.putObject("dgr").putObject("resume").putArray("token_ids").add(-4);
        assertThat(post(neg, "Authorization", TOKEN).statusCode()).isEqualTo(400);
    }
}
