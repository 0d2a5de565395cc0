package dgr.tracker;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dgr.node.NodeServer;
import dgr.tracker.cluster.Cluster;
import dgr.tracker.cluster.CuttingProxy;
import dgr.tracker.cluster.InMemoryLedger;
import dgr.tracker.ledger.Settlement;
import java.net.URI;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A node that dies mid-stream: the tracker resumes the generation on another node serving the same
 * recipe, and the client's stream is the one a failure-free run gives, chunk for chunk.
 */
class ResumeMidStreamTest {
    private static final InMemoryLedger LEDGER = new InMemoryLedger();
    private static Cluster cluster;
    private static NodeServer survivor;

    @BeforeAll
    static void start() {
        cluster = new Cluster(Cluster.config(), LEDGER);
        survivor = cluster.join(Cluster.node("survivor", 2));
    }

    @AfterAll
    static void stop() {
        cluster.close();
    }

    static String completion(int maxTokens) {
        return "{\"model\":\"llama-tiny\",\"prompt\":\"Once upon a time\",\"max_tokens\":" + maxTokens
                + ",\"stream\":true,\"temperature\":0.9,\"seed\":7,\"presence_penalty\":0.5,\"frequency_penalty\":0.3,"
                + "\"stream_options\":{\"include_usage\":true}}";
    }

    static String chat(int maxTokens) {
        return "{\"model\":\"llama-tiny\",\"messages\":[{\"role\":\"user\",\"content\":\"Tell me a story\"}],"
                + "\"max_tokens\":" + maxTokens + ",\"stream\":true,\"temperature\":0,\"stop\":[\"zz\"]}";
    }

    @ParameterizedTest(name = "{0} cut after {1} events")
    @CsvSource({"completions, 6", "completions, 1", "chat, 1", "chat, 9"})
    void aStreamCutMidwayContinuesOnAnotherNodeWithTheSameChunksNoErrorNoRepeat(String endpoint, int cutAfter)
            throws Exception {
        String path = endpoint.equals("chat") ? "v1/chat/completions" : "v1/completions";
        String body = endpoint.equals("chat") ? chat(24) : completion(24);
        String reference = cluster.post(cluster.trackerUrl(), path, body).body();

        try (CuttingProxy proxy = new CuttingProxy(Cluster.nodeUrl(survivor), cutAfter)) {
            String id = "cutting-" + endpoint + "-" + cutAfter;
            heartbeatAs(id, proxy, 8);
            HttpResponse<String> run = cluster.post(cluster.trackerUrl(), path, body);
            assertThat(proxy.cuts.get()).as("the proxy cut the stream").isEqualTo(1);
            assertThat(run.statusCode()).isEqualTo(200);
            assertThat(run.body()).doesNotContain("\"error\"");
            assertThat(chunks(run.body())).isEqualTo(chunks(reference));
            assertThat(Cluster.streamedText(run.body(), cluster.mapper)).isEqualTo(Cluster.streamedText(reference, cluster.mapper));
            assertThat(ids(run.body())).as("one response id for every chunk").hasSize(1);
            Settlement s = LEDGER.settled.getLast();
            assertThat(s.nodes()).containsExactly(id, "survivor");
            assertThat(s.recomputedTokens()).isPositive();
            assertThat(cluster.tracker.tracker().registry().healthy(cluster.tracker.tracker().registry().find(id).orElseThrow()))
                    .as("the failed node is out of routing at once").isFalse();
            cluster.tracker.tracker().registry().remove(id);
        }
    }

    @ParameterizedTest(name = "{0} cut after {1} events")
    @CsvSource({"completions, 6", "chat, 9"})
    void aWholeAnswerWhoseNodeDiesMidGenerationIsResumedAndIsTheAnswerTheNodeWouldHaveGiven(String endpoint, int cutAfter)
            throws Exception {
        String path = endpoint.equals("chat") ? "v1/chat/completions" : "v1/completions";
        String body = (endpoint.equals("chat") ? chat(24) : completion(24)).replace("\"stream\":true", "\"stream\":false")
                .replace(",\"stream_options\":{\"include_usage\":true}", "");
        HttpResponse<String> direct = cluster.post(Cluster.nodeUrl(survivor), path, body);
        assertThat(direct.statusCode()).as(direct.body()).isEqualTo(200);
        try (CuttingProxy proxy = new CuttingProxy(Cluster.nodeUrl(survivor), cutAfter)) {
            String id = "cutting-whole-" + endpoint;
            heartbeatAs(id, proxy, 8);
            HttpResponse<String> run = cluster.post(cluster.trackerUrl(), path, body);
            assertThat(proxy.cuts.get()).as("the node's stream to the tracker was cut mid-generation").isEqualTo(1);
            assertThat(run.statusCode()).as(run.body()).isEqualTo(200);
            assertThat(withoutIdAndCreated(run.body())).as("the answer a node gives, field for field")
                    .isEqualTo(withoutIdAndCreated(direct.body()));
            assertThat(run.headers().firstValue("X-Dgr-Node")).as("every node that served, in order").hasValue(id + ",survivor");
            Settlement s = LEDGER.settled.getLast();
            assertThat(s.nodes()).containsExactly(id, "survivor");
            assertThat(s.recomputedTokens()).isPositive();
            cluster.tracker.tracker().registry().remove(id);
        }
    }

    @Test
    void aResumedStreamNamesEveryNodeThatServedItInAnXDgrNodeTrailerWhenTheClientTakesTrailers() throws Exception {
        try (CuttingProxy proxy = new CuttingProxy(Cluster.nodeUrl(survivor), 4)) {
            heartbeatAs("trailer-cut", proxy, 8);
            byte[] body = completion(12).getBytes(java.nio.charset.StandardCharsets.UTF_8);
            String raw;
            try (java.net.Socket socket = new java.net.Socket("127.0.0.1", cluster.tracker.port())) {
                socket.setSoTimeout(60_000);
                socket.getOutputStream().write(("POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json"
                        + "\r\nTE: trailers\r\nConnection: close\r\nContent-Length: " + body.length + "\r\n\r\n")
                        .getBytes(java.nio.charset.StandardCharsets.US_ASCII));
                socket.getOutputStream().write(body);
                raw = untilLastChunk(socket.getInputStream());
            }
            assertThat(proxy.cuts.get()).isEqualTo(1);
            int end = raw.indexOf("\r\n\r\n");
            assertThat(raw.substring(0, end + 2)).as("the header names the first node").containsPattern("(?i)\r\nx-dgr-node: trailer-cut\r\n")
                    .containsPattern("(?i)\r\ntrailer: x-dgr-node");
            assertThat(raw.substring(end)).as("the trailer names both").containsPattern("(?i)\r\nx-dgr-node: trailer-cut,survivor\r\n");
            cluster.tracker.tracker().registry().remove("trailer-cut");
        }
    }

    @Test
    void aResumedStreamNamesEveryNodeInAnSseCommentBeforeDoneWhenTheClientAsksAndOnlyThen() throws Exception {
        try (CuttingProxy proxy = new CuttingProxy(Cluster.nodeUrl(survivor), 4)) {
            heartbeatAs("comment-cut", proxy, 8);
            HttpResponse<String> run = cluster.post(cluster.trackerUrl(), "v1/completions", completion(12), "X-Dgr-Node-Comment", "true");
            assertThat(proxy.cuts.get()).isEqualTo(1);
            assertThat(run.headers().firstValue("X-Dgr-Node")).as("the header names the first node").hasValue("comment-cut");
            assertThat(run.body()).as("the comment, then [DONE], ends the stream")
                    .endsWith("\n\n: X-Dgr-Node comment-cut,survivor\n\ndata: [DONE]\n\n");
            cluster.tracker.tracker().registry().remove("comment-cut");
        }
        HttpResponse<String> plain = cluster.post(cluster.trackerUrl(), "v1/completions", completion(4));
        assertThat(plain.body()).as("no comment unless asked").doesNotContain(": X-Dgr-Node").endsWith("data: [DONE]\n\n");
    }

    /** A chunked response up to its last chunk and trailer section (the server may keep the connection open). */
    private static String untilLastChunk(java.io.InputStream in) throws java.io.IOException {
        StringBuilder raw = new StringBuilder();
        byte[] buf = new byte[8192];
        while (true) {
            int n = in.read(buf);
            if (n < 0) return raw.toString();
            raw.append(new String(buf, 0, n, java.nio.charset.StandardCharsets.ISO_8859_1));
            int last = raw.indexOf("\r\n0\r\n", raw.indexOf("[DONE]") + 1);
            if (raw.indexOf("[DONE]") >= 0 && last >= 0 && raw.indexOf("\r\n\r\n", last + 2) >= 0) return raw.toString();
        }
    }

    private String withoutIdAndCreated(String json) {
        ObjectNode o = (ObjectNode) cluster.json(json);
        o.remove("id");
        o.remove("created");
        return o.toString();
    }

    @Test
    void aNodeThatHangsMidStreamWithItsSocketOpenIsResumedAfterTheChunkTimeout() throws Exception {
        InMemoryLedger ledger = new InMemoryLedger();
        try (Cluster c = new Cluster(Cluster.config().withChunkTimeout(java.time.Duration.ofMillis(800)), ledger)) {
            NodeServer n = c.join(Cluster.node("steady", 2));
            String reference = c.post(c.trackerUrl(), "v1/completions", completion(16)).body();
            try (CuttingProxy hung = new CuttingProxy(Cluster.nodeUrl(n), 4, true)) {
                heartbeatAs(c, n, "hung", hung, 8);
                HttpResponse<String> run = c.post(c.trackerUrl(), "v1/completions", completion(16));
                assertThat(hung.cuts.get()).isEqualTo(1);
                assertThat(chunks(run.body())).isEqualTo(chunks(reference));
                assertThat(ledger.settled.getLast().nodes()).containsExactly("hung", "steady");
            }
        }
    }

    @Test
    void aClientThatDidNotAskForUsageGetsNoUsageChunkEvenThoughTheTrackerAskedTheNode() {
        String body = completion(5).replace(",\"stream_options\":{\"include_usage\":true}", "");
        String sse = cluster.post(cluster.trackerUrl(), "v1/completions", body).body();
        assertThat(sse).doesNotContain("usage").doesNotContain("\"dgr\"").endsWith("data: [DONE]\n\n");
        assertThat(LEDGER.settled.getLast().generatedTokens()).isEqualTo(5);
    }

    /** Registers a node the way a dgr node's heartbeat does, with the survivor's capabilities under another id. */
    private static void heartbeatAs(String id, CuttingProxy proxy, int maxRunning) {
        heartbeatAs(cluster, survivor, id, proxy, maxRunning);
    }

    /** The proxy answers the tracker's pulls of its capabilities with the same report. */
    private static void heartbeatAs(Cluster cluster, NodeServer like, String id, CuttingProxy proxy, int maxRunning) {
        URI url = proxy.url();
        JsonNode caps = cluster.json(cluster.get(Cluster.nodeUrl(like), "v1/capabilities").body());
        ObjectNode c = caps.deepCopy();
        c.put("node_id", id);
        ((ObjectNode) c.get("models").get(0).get("concurrency_limit")).put("max_running_sessions", maxRunning);
        proxy.capabilities = c.toString();
        ObjectNode hb = cluster.mapper.createObjectNode();
        hb.put("url", url.toString());
        hb.set("capabilities", c);
        HttpResponse<String> r = cluster.post(cluster.trackerUrl(), "v1/nodes/heartbeat", hb.toString(),
                "Authorization", "Bearer " + Cluster.NODE_TOKEN);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    }

    /** Each data event without the fields that differ between two requests (id, created). */
    private static List<String> chunks(String sse) {
        List<String> out = new ArrayList<>();
        for (String line : sse.split("\n")) {
            if (!line.startsWith("data: ")) continue;
            if (line.equals("data: [DONE]")) {
                out.add("[DONE]");
                continue;
            }
            ObjectNode c = (ObjectNode) cluster.json(line.substring(6));
            c.remove("id");
            c.remove("created");
            out.add(c.toString());
        }
        return out;
    }

    private static java.util.Set<String> ids(String sse) {
        java.util.Set<String> out = new java.util.HashSet<>();
        for (String line : sse.split("\n")) {
            if (line.startsWith("data: {")) out.add(cluster.json(line.substring(6)).path("id").asText());
        }
        return out;
    }
}
