package dgr.node;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import dgr.node.http.NodeHttp;
import dgr.node.metrics.NodeMetrics;
import dgr.node.model.ModelRegistry;
import io.helidon.webserver.WebServer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;

/** Before its models are loaded a node answers 503 to /health and to generation requests. */
class HealthBeforeLoadTest {
    @Test
    void healthIs503UntilModelsAreLoaded() throws Exception {
        NodeHttp http = new NodeHttp(new ModelRegistry(), ApiKeys.none(), new NodeMetrics(),
                JsonNodeFactory.instance::objectNode, 1024, null);
        WebServer web = WebServer.builder().host("127.0.0.1").port(0).routing(r -> r.any(http::handle)).build().start();
        try (HttpClient client = HttpClient.newHttpClient()) {
            String base = "http://127.0.0.1:" + web.port();
            var health = client.send(HttpRequest.newBuilder(URI.create(base + "/health")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(health.statusCode()).isEqualTo(503);
            var completion = client.send(HttpRequest.newBuilder(URI.create(base + "/v1/completions"))
                    .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"m\",\"prompt\":\"a\"}")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(completion.statusCode()).isEqualTo(503);
            assertThat(completion.body()).contains("\"error\"");
        } finally {
            web.stop();
        }
    }
}
