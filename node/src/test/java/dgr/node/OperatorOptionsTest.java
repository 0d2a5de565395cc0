package dgr.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dgr.engine.sampler.SamplerConfig;
import java.io.InputStream;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.List;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.Test;

/** Issue 27, item 5: CORS with preflight, HTTPS from PEM files, and an operator chat template. */
class OperatorOptionsTest {
    static ServingOptions serving(List<String> origins, Path key, Path cert, String template) {
        return new ServingOptions(SamplerConfig.llamaCppDefaults(-1), ServingOptions.DEFAULT_MAX_TOKENS, template, origins, key, cert);
    }

    static Path resource(String name) {
        try {
            return Path.of(OperatorOptionsTest.class.getResource(name).toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    static HttpResponse<String> send(HttpClient client, HttpRequest r) throws Exception {
        return client.send(r, HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void anAllowedOriginGetsItsPreflightAndHeadersAndOthersGetNone() throws Exception {
        try (NodeServer node = TestNodes.start(TestNodes.config().withKeys(List.of("k1"), null)
                .withServing(serving(List.of("http://app.example"), null, null, null)))) {
            HttpClient client = HttpClient.newHttpClient();
            String base = "http://127.0.0.1:" + node.port();
            HttpResponse<String> pre = send(client, HttpRequest.newBuilder(URI.create(base + "/v1/chat/completions"))
                    .method("OPTIONS", HttpRequest.BodyPublishers.noBody()).header("Origin", "http://app.example")
                    .header("Access-Control-Request-Method", "POST")
                    .header("Access-Control-Request-Headers", "authorization, content-type").build());
            // No key on a preflight (browsers send none), and still answered.
            assertThat(pre.statusCode()).isEqualTo(204);
            assertThat(pre.headers().firstValue("access-control-allow-origin")).hasValue("http://app.example");
            assertThat(pre.headers().firstValue("access-control-allow-methods")).hasValueSatisfying(v -> assertThat(v).contains("POST"));
            assertThat(pre.headers().firstValue("access-control-allow-headers")).hasValue("authorization, content-type");

            HttpResponse<String> get = send(client, HttpRequest.newBuilder(URI.create(base + "/v1/models"))
                    .header("Origin", "http://app.example").header("Authorization", "Bearer k1").build());
            assertThat(get.statusCode()).isEqualTo(200);
            assertThat(get.headers().firstValue("access-control-allow-origin")).hasValue("http://app.example");

            HttpResponse<String> other = send(client, HttpRequest.newBuilder(URI.create(base + "/v1/models"))
                    .header("Origin", "http://evil.example").header("Authorization", "Bearer k1").build());
            assertThat(other.headers().firstValue("access-control-allow-origin")).isEmpty();
            HttpResponse<String> otherPre = send(client, HttpRequest.newBuilder(URI.create(base + "/v1/models"))
                    .method("OPTIONS", HttpRequest.BodyPublishers.noBody()).header("Origin", "http://evil.example").build());
            assertThat(otherPre.statusCode()).isEqualTo(204);
            assertThat(otherPre.headers().firstValue("access-control-allow-origin")).isEmpty();
        }
    }

    @Test
    void tlsServesHttpsFromPemFiles() throws Exception {
        Path key = resource("/tls/localhost-key.pem");
        Path cert = resource("/tls/localhost-cert.pem");
        try (NodeServer node = TestNodes.start(TestNodes.config().withServing(serving(List.of(), key, cert, null)))) {
            KeyStore trust = KeyStore.getInstance(KeyStore.getDefaultType());
            trust.load(null, null);
            try (InputStream in = java.nio.file.Files.newInputStream(cert)) {
                trust.setCertificateEntry("node", CertificateFactory.getInstance("X.509").generateCertificate(in));
            }
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(trust);
            SSLContext ssl = SSLContext.getInstance("TLS");
            ssl.init(null, tmf.getTrustManagers(), null);
            HttpClient client = HttpClient.newBuilder().sslContext(ssl).connectTimeout(Duration.ofSeconds(5)).build();
            HttpResponse<String> r = send(client, HttpRequest.newBuilder(URI.create("https://localhost:" + node.port() + "/health")).build());
            assertThat(r.statusCode()).isEqualTo(200);
        }
    }

    @Test
    void tlsWithAnUnreadableKeyFailsToStartNamingTheFlag() {
        Path cert = resource("/tls/localhost-cert.pem");
        assertThatThrownBy(() -> TestNodes.start(TestNodes.config()
                .withServing(serving(List.of(), Path.of("/nonexistent/key.pem"), cert, null))))
                .hasMessageContaining("--ssl-key-file").hasMessageContaining("/nonexistent/key.pem");
    }

    @Test
    void theOperatorsChatTemplateReplacesTheModels() {
        String template = "{% for m in messages %}<<{{ m['content'] }}>>{% endfor %}";
        try (NodeServer node = TestNodes.start(TestNodes.config().withServing(serving(List.of(), null, null, template)))) {
            Http http = new Http(node);
            HttpResponse<String> r = http.post("/v1/chat/completions", "{\"model\":\"llama-tiny\",\"max_tokens\":1,"
                    + "\"messages\":[{\"role\":\"user\",\"content\":\"hello there\"}]}");
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            int promptTokens = Http.json(r).at("/usage/prompt_tokens").asInt();
            var model = node.models().find(TestNodes.MODEL).orElseThrow();
            // The prompt is the operator's template applied to the one message, not the model's ChatML.
            assertThat(promptTokens).isEqualTo(model.encodePrompt("<<hello there>>").length);
        }
    }
}
