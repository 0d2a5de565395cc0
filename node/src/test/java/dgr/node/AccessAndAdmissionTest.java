package dgr.node;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dgr.runtime.SchedulerConfig;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** API keys (401) and admission control (429 with Retry-After). */
class AccessAndAdmissionTest {
    static final String OK_BODY = "{\"model\":\"llama-tiny\",\"prompt\":\"Hi\",\"max_tokens\":2,\"temperature\":0}";

    @Test
    void requestsWithoutAValidBearerKeyGet401AndKeysMapToTenants(@TempDir Path dir) throws IOException {
        Path keys = dir.resolve("keys.txt");
        Files.writeString(keys, "# key tenant\nsk-alice-1 alice\n\nsk-bob-1 bob\n");
        try (NodeServer node = TestNodes.start(TestNodes.config().withKeys(List.of("sk-cli"), keys))) {
            Http http = new Http(node);
            JsonNode e = ErrorResponsesTest.assertOpenAiError(http.post("/v1/completions", OK_BODY), 401);
            assertThat(e.get("code").asText()).isEqualTo("invalid_api_key");
            ErrorResponsesTest.assertOpenAiError(http.post("/v1/completions", OK_BODY, "Authorization", "Bearer sk-wrong"), 401);
            ErrorResponsesTest.assertOpenAiError(http.get("/v1/models", "Authorization", "sk-alice-1"), 401);
            assertThat(http.post("/v1/completions", OK_BODY, "Authorization", "Bearer sk-alice-1").statusCode()).isEqualTo(200);
            assertThat(http.post("/v1/completions", OK_BODY, "Authorization", "Bearer sk-bob-1").statusCode()).isEqualTo(200);
            assertThat(http.get("/v1/models", "Authorization", "Bearer sk-cli").statusCode()).isEqualTo(200);
            // Health and metrics stay open for load balancers and scrapers.
            assertThat(http.get("/health").statusCode()).isEqualTo(200);
            assertThat(http.get("/metrics").statusCode()).isEqualTo(200);
            // Each key's tokens were charged to its own tenant.
            var service = node.models().find(TestNodes.MODEL).orElseThrow().scheduler().tenantService();
            assertThat(service.keySet()).containsExactlyInAnyOrder("alice", "bob");
        }
    }

    @Test
    void fullQueueIs429WithRetryAfter() {
        NodeConfig cfg = TestNodes.config().withScheduler(SchedulerConfig.defaults().withBatch(16, 64).withMaxWaitingSessions(0));
        try (NodeServer node = TestNodes.start(cfg)) {
            Http http = new Http(node);
            HttpResponse<String> r = http.post("/v1/completions", OK_BODY);
            JsonNode e = ErrorResponsesTest.assertOpenAiError(r, 429);
            assertThat(e.get("type").asText()).isEqualTo("rate_limit_error");
            assertThat(r.headers().firstValue("retry-after")).hasValueSatisfying(v -> assertThat(Integer.parseInt(v)).isPositive());
            PromText m = PromText.parse(http.get("/metrics").body());
            assertThat(m.value("dgr_requests_total", Map.of("model", "llama-tiny", "outcome", "rejected"))).isEqualTo(1.0);
            assertThat(m.value("dgr_state_bytes_used", Map.of("model", "llama-tiny"))).isZero();
        }
    }
}
