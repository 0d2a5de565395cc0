package dgr.node.accounting;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dgr.engine.EngineOptions;
import dgr.node.ModelSpec;
import dgr.node.NodeConfig;
import dgr.node.NodeServer;
import dgr.runtime.SchedulerConfig;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The node's accounting of the tracker's request ids, served to the node token only: a finished request's
 * record equals the usage its client saw; a stream the client cut is recorded at what the node computed
 * (cancelled, generated >= delivered >= what the client read).
 */
class AccountingEndpointTest {
    private static final String TOKEN = "node-secret";
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient CLIENT = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private static NodeServer node;

    @BeforeAll
    static void start() throws Exception {
        Path model = Path.of(AccountingEndpointTest.class.getResource("/llama-tiny-Q4_0.gguf").toURI());
        node = NodeServer.start(NodeConfig.of(List.of(new ModelSpec(model, "llama-tiny"))).withAddress("127.0.0.1", 0)
                .withEngine(EngineOptions.defaults().withThreads(2)).withScheduler(SchedulerConfig.defaults().withBatch(16, 64))
                .withNodeToken(TOKEN));
    }

    @AfterAll
    static void stop() { node.close(); }

    private static HttpResponse<String> post(String path, String body, String... headers) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + node.port() + path))
                .timeout(Duration.ofSeconds(60)).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body));
        for (int i = 0; i < headers.length; i += 2) b.header(headers[i], headers[i + 1]);
        return CLIENT.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static JsonNode accounting(String... ids) throws Exception {
        HttpResponse<String> r = post("/v1/accounting", JSON.writeValueAsString(java.util.Map.of("request_ids", ids)),
                "Authorization", "Bearer " + TOKEN);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        return JSON.readTree(r.body());
    }

    @Test
    void aFinishedRequestsRecordEqualsTheUsageItsClientSaw() throws Exception {
        HttpResponse<String> r = post("/v1/completions", "{\"model\":\"llama-tiny\",\"prompt\":\"Hello world\","
                + "\"max_tokens\":7,\"temperature\":0}", "X-Dgr-Request-Id", "req-whole-1");
        assertThat(r.statusCode()).isEqualTo(200);
        JsonNode usage = JSON.readTree(r.body()).get("usage");
        JsonNode answer = accounting("req-whole-1", "never-seen");
        JsonNode rec = answer.get("requests").get(0);
        assertThat(rec.get("request_id").asText()).isEqualTo("req-whole-1");
        assertThat(rec.get("prompt_tokens").asInt()).isEqualTo(usage.get("prompt_tokens").asInt());
        assertThat(rec.get("generated_tokens").asInt()).isEqualTo(usage.get("completion_tokens").asInt());
        assertThat(rec.get("delivered_tokens").asInt()).isEqualTo(usage.get("completion_tokens").asInt());
        assertThat(rec.get("finish_reason").asText()).isIn("stop", "length");
        assertThat(answer.get("unknown").get(0).asText()).isEqualTo("never-seen");
    }

    @Test
    void aStreamCutByItsClientIsRecordedAtWhatTheNodeComputed() throws Exception {
        byte[] body = ("{\"model\":\"llama-tiny\",\"prompt\":\"The quick brown fox\",\"max_tokens\":400,"
                + "\"temperature\":0,\"stream\":true}").getBytes(StandardCharsets.UTF_8);
        int read = 0;
        try (Socket s = new Socket("127.0.0.1", node.port())) {
            OutputStream out = s.getOutputStream();
            out.write(("POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-Dgr-Request-Id: "
                    + "req-cut-1\r\nContent-Length: " + body.length + "\r\nConnection: close\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            out.write(body);
            out.flush();
            BufferedReader in = new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.UTF_8));
            for (String line; read < 3 && (line = in.readLine()) != null; ) {
                if (line.startsWith("data: {")) read++;
            }
        }
        JsonNode rec = null;
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (System.nanoTime() < deadline) {   // the node notices the cut at its next write, then the session ends
            rec = accounting("req-cut-1").get("requests").get(0);
            if (!rec.get("finish_reason").isNull()) break;
            Thread.sleep(10);
        }
        assertThat(rec.get("finish_reason").asText()).isEqualTo("cancelled");
        int generated = rec.get("generated_tokens").asInt();
        int delivered = rec.get("delivered_tokens").asInt();
        assertThat(delivered).isGreaterThanOrEqualTo(read).isLessThanOrEqualTo(generated);
        assertThat(generated).isLessThan(400);
        assertThat(rec.get("prompt_tokens").asInt()).isPositive();
    }

    @Test
    void theAccountingIsServedOnlyToTheNodeToken() throws Exception {
        String body = "{\"request_ids\":[\"x\"]}";
        assertThat(post("/v1/accounting", body).statusCode()).isEqualTo(401);
        HttpResponse<String> wrong = post("/v1/accounting", body, "Authorization", "Bearer node-secreT");
        assertThat(wrong.statusCode()).isEqualTo(401);
        assertThat(JSON.readTree(wrong.body()).get("error").get("message").asText()).contains("node token");
        HttpResponse<String> bad = post("/v1/accounting", "{\"request_ids\":\"x\"}", "Authorization", "Bearer " + TOKEN);
        assertThat(bad.statusCode()).isEqualTo(400);
        assertThat(bad.body()).contains("request_ids");
    }
}
