package dgr.node;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The probe's smaller findings: chat's {@code logprobs: 5} is a type error (not silently ignored), a
 * {@code max_tokens} beyond 64 bits is out of range (not "expected an integer, but got an integer"),
 * a deadline is its own outcome, the generated-token counter moves while a session runs, and the
 * state pool shows up as {@code dgr_state_bytes_pooled}.
 */
class CountersAndLimitsTest {
    static NodeServer node;
    static Http http;
    static final Map<String, String> MODEL = Map.of("model", TestNodes.MODEL);

    @BeforeAll
    static void start() { node = TestNodes.start(TestNodes.config()); http = new Http(node); }

    @AfterAll
    static void stop() { node.close(); }

    @Test
    void chatLogprobsGivenAsACountIsATypeErrorNotIgnored() {
        var r = http.post("/v1/chat/completions", "{\"model\":\"llama-tiny\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],"
                + "\"max_tokens\":2,\"logprobs\":5}");
        JsonNode e = ErrorResponsesTest.assertOpenAiError(r, 400);
        assertThat(e.get("param").asText()).isEqualTo("logprobs");
        assertThat(e.get("message").asText()).contains("expected a boolean, but got an integer");
    }

    @Test
    void maxTokensBeyondSixtyFourBitsIsOutOfRange() {
        var r = http.post("/v1/completions", "{\"model\":\"llama-tiny\",\"prompt\":\"a\",\"max_tokens\":9223372036854775808}");
        JsonNode e = ErrorResponsesTest.assertOpenAiError(r, 400);
        assertThat(e.get("param").asText()).isEqualTo("max_tokens");
        assertThat(e.get("message").asText()).contains("9223372036854775808 is out of range");
    }

    @Test
    void anExpiredDeadlineIsCountedAsATimeoutNotACancellation() {
        try (NodeServer n = TestNodes.start(TestNodes.config().withRequestTimeout(Duration.ofMillis(1)))) {
            Http h = new Http(n);
            var r = h.post("/v1/completions", "{\"model\":\"llama-tiny\",\"prompt\":\"Once\",\"max_tokens\":400,\"ignore_eos\":true}");
            assertThat(r.statusCode()).as(r.body()).isEqualTo(504);
            PromText m = PromText.parse(h.get("/metrics").body());
            assertThat(m.value("dgr_requests_total", Map.of("model", "llama-tiny", "outcome", "timeout"))).isEqualTo(1);
            assertThat(m.value("dgr_requests_total", Map.of("model", "llama-tiny", "outcome", "cancelled"))).isZero();
        }
    }

    @Test
    void theGeneratedTokenCounterMovesWhileASessionRuns() throws Exception {
        double before = PromText.parse(http.get("/metrics").body()).value("dgr_generation_tokens_total", MODEL);
        HttpRequest req = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + node.port() + "/v1/completions"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(
                        "{\"model\":\"llama-tiny\",\"prompt\":\"Once\",\"max_tokens\":480,\"ignore_eos\":true,\"stream\":true}"))
                .build();
        HttpResponse<java.io.InputStream> r = HttpClient.newHttpClient().send(req, HttpResponse.BodyHandlers.ofInputStream());
        boolean seenMidway = false;
        try (BufferedReader in = new BufferedReader(new InputStreamReader(r.body()))) {
            in.readLine(); // the first chunk: the session runs
            // Scrape until the session ends: some scrape must see tokens counted while it still runs.
            while (true) {
                PromText m = PromText.parse(http.get("/metrics").body());
                double running = m.value("dgr_num_requests_running", MODEL);
                double generated = m.value("dgr_generation_tokens_total", MODEL);
                if (running == 1 && generated > before) { seenMidway = true; break; }
                if (running == 0) break;
            }
            while (in.readLine() != null) { } // read to the end
        }
        assertThat(seenMidway).as("dgr_generation_tokens_total above 0 while the session was running").isTrue();
    }

    @Test
    void pooledStateBytesAreReportedBesideTheBytesInUse() {
        assertThat(http.post("/v1/completions", "{\"model\":\"llama-tiny\",\"prompt\":\"a\",\"max_tokens\":4}").statusCode()).isEqualTo(200);
        PromText m = PromText.parse(http.get("/metrics").body());
        // The session's pages went back to the pool (under its floor, so kept for the next session).
        assertThat(m.value("dgr_state_bytes_pooled", MODEL)).isPositive();
        assertThat(m.value("dgr_state_bytes_used", MODEL)).isZero();
    }
}
