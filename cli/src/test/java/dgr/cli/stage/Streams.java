package dgr.cli.stage;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

/** Streaming completions against a head, as an OpenAI client sees them: text, chunk times, an error event. */
final class Streams {
    static final ObjectMapper JSON = new ObjectMapper();
    static final HttpClient HTTP = HttpClient.newHttpClient();

    /** One client's stream: its text, the arrival time of each chunk, the error event if one came. */
    static final class Result {
        final StringBuilder text = new StringBuilder();
        final List<Long> chunkNanos = new ArrayList<>();
        final AtomicInteger chunks = new AtomicInteger();
        volatile String error;
        volatile int status;

        long longestGapMillis() {
            long gap = 0;
            for (int i = 1; i < chunkNanos.size(); i++) gap = Math.max(gap, chunkNanos.get(i) - chunkNanos.get(i - 1));
            return gap / 1_000_000;
        }
    }

    private Streams() {}

    static String body(int session, int maxTokens) {
        String sampling = session % 2 == 0 ? "\"temperature\":0" : "\"temperature\":0.9,\"seed\":" + (100 + session);
        return "{\"model\":\"m\",\"prompt\":\"Session " + session + " says once upon a time " + "and then ".repeat(session)
                + "\",\"max_tokens\":" + maxTokens + ",\"ignore_eos\":true,\"stream\":true," + sampling + "}";
    }

    /** Starts {@code n} streams at once; each future completes when its stream ends. */
    static List<CompletableFuture<Result>> start(String base, int n, int maxTokens) {
        List<CompletableFuture<Result>> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            Result r = new Result();
            int session = i;
            out.add(CompletableFuture.supplyAsync(() -> read(base, body(session, maxTokens), r), Thread::startVirtualThread).thenApply(x -> r));
            results.add(r);
        }
        return out;
    }

    /** The results of the futures last started, readable while they run. */
    static final List<Result> results = new java.util.concurrent.CopyOnWriteArrayList<>();

    private static Result read(String base, String body, Result r) {
        try {
            HttpRequest req = HttpRequest.newBuilder(URI.create(base + "/v1/completions"))
                    .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build();
            HttpResponse<java.io.InputStream> res = HTTP.send(req, HttpResponse.BodyHandlers.ofInputStream());
            r.status = res.statusCode();
            try (BufferedReader in = new BufferedReader(new InputStreamReader(res.body(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null) {
                    if (r.status != 200) {
                        r.error = (r.error == null ? "" : r.error) + line;
                        continue;
                    }
                    if (!line.startsWith("data: ")) continue;
                    String data = line.substring(6);
                    if (data.equals("[DONE]")) break;
                    JsonNode n = JSON.readTree(data);
                    if (n.has("error")) {
                        r.error = n.get("error").toString();
                        continue;
                    }
                    JsonNode c = n.path("choices").path(0);
                    if (c.has("text") && (c.path("finish_reason").isNull() || c.path("finish_reason").isMissingNode())) {
                        r.text.append(c.get("text").asText());
                        r.chunkNanos.add(System.nanoTime());
                        r.chunks.incrementAndGet();
                    }
                }
            }
            return r;
        } catch (Exception e) {
            r.error = "client failed: " + e;
            return r;
        }
    }

    static List<Result> join(List<CompletableFuture<Result>> fs) {
        List<Result> out = new ArrayList<>();
        for (var f : fs) out.add(f.join());
        results.clear();
        return out;
    }
}
