package dgr.tracker;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dgr.tracker.cluster.Cluster;
import dgr.tracker.cluster.InMemoryLedger;
import dgr.tracker.ledger.Settlement;
import io.helidon.http.HeaderNames;
import io.helidon.webserver.WebServer;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import java.io.OutputStream;
import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * Backend-agnostic: an OpenAI-compatible server that is not dgr (a stand-in here, as llama.cpp's server
 * or vLLM would be) is registered by URL with its saturation.json, routed by the same headroom rule, its
 * streams relayed and its usage taken from its responses.
 */
class OpenAiBackendTest {
    private static final String ADMIN = "Bearer " + Cluster.ADMIN_TOKEN;

    /** A minimal OpenAI server: one model, a chat stream of two pieces, usage when asked. */
    private static void standIn(ServerRequest req, ServerResponse res) throws Exception {
        String path = req.path().path();
        if (path.equals("/v1/models")) {
            res.header(HeaderNames.CONTENT_TYPE, "application/json");
            res.send("{\"object\":\"list\",\"data\":[{\"id\":\"standin\",\"object\":\"model\"}]}");
            return;
        }
        String body = req.content().as(String.class);
        boolean usage = body.contains("\"include_usage\":true");
        res.header(HeaderNames.CONTENT_TYPE, "text/event-stream");
        try (OutputStream out = res.outputStream()) {
            for (String piece : new String[] {"Hel", "lo"}) {
                out.write(("data: {\"id\":\"x1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"standin\","
                        + "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" + piece + "\"},\"finish_reason\":null}]}\n\n")
                        .getBytes(StandardCharsets.UTF_8));
                out.flush();
            }
            out.write(("data: {\"id\":\"x1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"standin\","
                    + "\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n").getBytes(StandardCharsets.UTF_8));
            if (usage) {
                out.write(("data: {\"id\":\"x1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"standin\","
                        + "\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":2,\"total_tokens\":7}}\n\n")
                        .getBytes(StandardCharsets.UTF_8));
            }
            out.write("data: [DONE]\n\n".getBytes(StandardCharsets.UTF_8));
        }
    }

    @Test
    void anOpenAiServerThatIsNotDgrIsRegisteredRoutedByItsSaturationFileAndRelayed() {
        WebServer server = WebServer.builder().host("127.0.0.1").port(0).routing(r -> r.any((q, s) -> {
            try {
                standIn(q, s);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        })).build().start();
        InMemoryLedger ledger = new InMemoryLedger();
        try (Cluster c = new Cluster(Cluster.config(), ledger)) {
            URI url = URI.create("http://127.0.0.1:" + server.port() + "/v1");
            String registration = "{\"url\":\"" + url + "\",\"id\":\"llama-server\",\"saturation\":{\"schema_version\":1,"
                    + "\"recommendations\":[{\"model_name\":\"standin\",\"recommended_max_concurrency\":3}]}}";
            assertThat(c.post(c.trackerUrl(), "v1/nodes", registration).statusCode()).as("admin token needed").isEqualTo(401);
            HttpResponse<String> reg = c.post(c.trackerUrl(), "v1/nodes", registration, "Authorization", ADMIN);
            assertThat(reg.statusCode()).as(reg.body()).isEqualTo(201);

            JsonNode node = c.json(c.get(c.trackerUrl(), "v1/nodes", "Authorization", ADMIN).body()).path("data").path(0);
            assertThat(node.path("id").asText()).isEqualTo("llama-server");
            assertThat(node.path("healthy").asBoolean()).isTrue();
            assertThat(node.path("backend").asText()).isEqualTo("openai");
            assertThat(node.path("recommended_max_concurrency").asInt()).isEqualTo(3);
            assertThat(node.path("capacity_measured").asBoolean()).isTrue();
            assertThat(node.path("resumes_mid_stream").asBoolean()).isFalse();

            String chat = "{\"model\":\"standin\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"stream\":true,"
                    + "\"stream_options\":{\"include_usage\":true}}";
            HttpResponse<String> r = c.post(c.trackerUrl(), "v1/chat/completions", chat);
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(Cluster.streamedText(r.body(), c.mapper)).isEqualTo("Hello");
            assertThat(r.body()).contains("\"prompt_tokens\":5").endsWith("data: [DONE]\n\n");
            Settlement s = ledger.settled.getLast();
            assertThat(s.nodes()).containsExactly("llama-server");
            assertThat(s.promptTokens()).isEqualTo(5);
            assertThat(s.generatedTokens()).isEqualTo(2);
            assertThat(s.outcome()).isEqualTo(Settlement.Outcome.STOP);

            HttpResponse<String> unreachable = c.post(c.trackerUrl(), "v1/nodes", "{\"url\":\"http://127.0.0.1:9/v1\"}",
                    "Authorization", ADMIN);
            assertThat(unreachable.statusCode()).isEqualTo(502);
            assertThat(c.json(unreachable.body()).path("error").path("code").asText()).isEqualTo("backend_unreachable");
        } finally {
            server.stop();
        }
    }
}
