package dgr.node;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Streams over raw HTTP: batch invariance seen through the API, disconnects, and /metrics. */
class StreamingTest {
    static NodeServer node;
    static Http http;

    @BeforeAll
    static void start() {
        node = TestNodes.start(TestNodes.config());
        http = new Http(node);
    }

    @AfterAll
    static void stop() { node.close(); }

    /** What one streamed completion delivered: its text pieces, finish reason and usage. */
    record Streamed(String text, int pieces, String finishReason, JsonNode usage) {}

    static String body(String prompt, int maxTokens, String sampling) {
        return "{\"model\":\"llama-tiny\",\"prompt\":" + Http.JSON.valueToTree(prompt) + ",\"max_tokens\":" + maxTokens
                + "," + sampling + ",\"stream\":true,\"stream_options\":{\"include_usage\":true}}";
    }

    /** A streaming completion over a plain socket, read to {@code data: [DONE]}. */
    Streamed stream(String body) throws IOException {
        try (Socket s = open(body); BufferedReader in = reader(s)) {
            StringBuilder text = new StringBuilder();
            int pieces = 0;
            String finish = null;
            JsonNode usage = null;
            for (String line; (line = in.readLine()) != null; ) {
                if (line.equals("data: [DONE]")) return new Streamed(text.toString(), pieces, finish, usage);
                if (!line.startsWith("data: ")) continue;
                JsonNode chunk = Http.JSON.readTree(line.substring(6));
                assertThat(chunk.has("error")).as(line).isFalse();
                for (JsonNode c : chunk.get("choices")) {
                    text.append(c.get("text").asText());
                    pieces++;
                    if (!c.get("finish_reason").isNull()) finish = c.get("finish_reason").asText();
                }
                if (chunk.hasNonNull("usage")) usage = chunk.get("usage");
            }
            throw new AssertionError("stream ended without [DONE]");
        }
    }

    private Socket open(String body) throws IOException {
        Socket s = new Socket("127.0.0.1", node.port());
        byte[] b = body.getBytes(StandardCharsets.UTF_8);
        OutputStream out = s.getOutputStream();
        out.write(("POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                + "Content-Length: " + b.length + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        out.write(b);
        out.flush();
        return s;
    }

    private static BufferedReader reader(Socket s) throws IOException {
        return new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.UTF_8));
    }

    @Test
    void eightConcurrentStreamsGetExactlyWhatEachGetsAlone() throws Exception {
        List<String> bodies = new ArrayList<>();
        String[] prompts = {"The quick brown fox", "Once upon a time", "He said", "Hello world", "In the beginning",
                "A B C", "lazy dog", "jumps over the"};
        for (int i = 0; i < 8; i++) {
            String sampling = i % 2 == 0 ? "\"temperature\":0" : "\"temperature\":0.9,\"top_p\":0.9,\"seed\":" + (100 + i);
            bodies.add(body(prompts[i], 10 + i, sampling));
        }
        List<Streamed> alone = new ArrayList<>();
        for (String b : bodies) alone.add(stream(b));
        List<Streamed> together = new ArrayList<>();
        try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
            List<Future<Streamed>> fs = new ArrayList<>();
            for (String b : bodies) fs.add(pool.submit((Callable<Streamed>) () -> stream(b)));
            for (Future<Streamed> f : fs) together.add(f.get());
        }
        for (int i = 0; i < 8; i++) {
            assertThat(together.get(i).text()).as("client %d", i).isEqualTo(alone.get(i).text());
            assertThat(together.get(i).finishReason()).isEqualTo(alone.get(i).finishReason());
            assertThat(together.get(i).usage()).isEqualTo(alone.get(i).usage());
        }
        PromText m = PromText.parse(http.get("/metrics").body());
        // Concurrent clients really shared batches: some iteration ran more than one session.
        double rowsSum = m.value("dgr_batch_rows_sum", Map.of("model", "llama-tiny"));
        double iterations = m.value("dgr_batch_rows_count", Map.of("model", "llama-tiny"));
        assertThat(rowsSum / iterations).isGreaterThan(1.0);
    }

    @Test
    void closingTheStreamAfterThreeTokensCancelsTheSessionAndFreesItsState() throws Exception {
        Map<String, String> model = Map.of("model", "llama-tiny");
        double cancelledBefore = metrics().value("dgr_requests_total", Map.of("model", "llama-tiny", "outcome", "cancelled"));
        try (Socket s = open(body("The quick brown fox", 480, "\"temperature\":0")); BufferedReader in = reader(s)) {
            int tokens = 0;
            for (String line; tokens < 3 && (line = in.readLine()) != null; ) {
                if (line.startsWith("data: {")) tokens++;
            }
            assertThat(tokens).isEqualTo(3);
            assertThat(metrics().value("dgr_num_requests_running", model)).isEqualTo(1.0);
        }
        // Bounded poll on the metric: the server notices at its next write and cancels.
        long deadline = System.nanoTime() + 30_000_000_000L;
        PromText m = metrics();
        while (System.nanoTime() < deadline && (m.value("dgr_state_bytes_used", model) != 0
                || m.value("dgr_requests_total", Map.of("model", "llama-tiny", "outcome", "cancelled")) == cancelledBefore)) {
            Thread.sleep(10);
            m = metrics();
        }
        assertThat(m.value("dgr_requests_total", Map.of("model", "llama-tiny", "outcome", "cancelled")))
                .isEqualTo(cancelledBefore + 1);
        assertThat(m.value("dgr_state_bytes_used", model)).isZero();
        assertThat(m.value("dgr_num_requests_running", model)).isZero();
        // It was cut short: far fewer than the 480 tokens asked for were generated.
        assertThat(m.value("dgr_generation_tokens_total", model)).isLessThan(480);
    }

    @Test
    void metricsParseAsPrometheusTextWithEveryRequiredFamily() {
        var r = http.get("/metrics");
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.headers().firstValue("content-type").orElse("")).startsWith("text/plain");
        PromText m = PromText.parse(r.body());
        assertThat(m.types).containsEntry("dgr_requests_total", "counter")
                .containsEntry("dgr_time_to_first_token_seconds", "histogram")
                .containsEntry("dgr_inter_token_latency_seconds", "histogram")
                .containsEntry("dgr_e2e_request_latency_seconds", "histogram")
                .containsEntry("dgr_request_queue_time_seconds", "histogram")
                .containsEntry("dgr_batch_rows", "histogram")
                .containsEntry("dgr_num_requests_running", "gauge")
                .containsEntry("dgr_num_requests_waiting", "gauge")
                .containsEntry("dgr_batch_occupancy", "gauge")
                .containsEntry("dgr_state_bytes_used", "gauge")
                .containsEntry("dgr_state_bytes_budget", "gauge")
                .containsEntry("dgr_prompt_tokens_total", "counter")
                .containsEntry("dgr_generation_tokens_total", "counter");
        assertThat(m.value("dgr_state_bytes_budget", Map.of("model", "llama-tiny")))
                .isEqualTo((double) node.models().find("llama-tiny").orElseThrow().scheduler().config().stateBudgetBytes());
        // Every family is per model, except the listener's (node-wide: connections, restarts).
        java.util.Set<String> nodeWide = java.util.Set.of("dgr_connections_open", "dgr_connections_refused_total",
                "dgr_listener_restarts_total");
        for (PromText.Sample s : m.samples) {
            if (!nodeWide.contains(s.name())) assertThat(s.labels()).as(s.name()).containsEntry("model", "llama-tiny");
        }
    }

    private static PromText metrics() { return PromText.parse(http.get("/metrics").body()); }
}
