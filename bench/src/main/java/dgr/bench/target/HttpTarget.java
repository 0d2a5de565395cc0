package dgr.bench.target;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dgr.bench.metrics.Summary;
import dgr.bench.workload.RequestSpec;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * Any OpenAI-compatible server (a dgr node or tracker, llama.cpp's llama-server, vLLM): streaming
 * {@code /v1/completions}, timed per SSE chunk. Server-side queue time and batch rows come from the
 * server's {@code /metrics} when it exports dgr's metric names; otherwise they are "unavailable".
 */
public final class HttpTarget implements Target {
    static final String QUEUE = "dgr_request_queue_time_seconds";
    static final String ROWS = "dgr_batch_rows";

    private static final ObjectMapper JSON = new ObjectMapper();

    private final URI base;
    private final String model;
    private final String apiKey;
    private final boolean ignoreEos;
    private final HttpClient http;
    private final TargetInfo info;
    private PrometheusText before;

    /**
     * @param url            the server's base URL (with or without {@code /v1})
     * @param model          model id to request, or null for the first of {@code /v1/models}
     * @param apiKey         bearer key, or null
     * @param lane           lane to report when the server does not say
     * @param artifactSha256 the artifact's hash when the caller knows it (a local copy), else null
     * @param ignoreEos      send {@code ignore_eos} so every request generates {@code max_tokens}
     */
    public HttpTarget(String url, String model, String apiKey, String lane, String artifactSha256, boolean ignoreEos) {
        String u = url.endsWith("/") ? url.substring(0, url.length() - 1) : url;
        if (u.endsWith("/v1")) u = u.substring(0, u.length() - 3);
        this.base = URI.create(u + "/");
        this.apiKey = apiKey;
        this.ignoreEos = ignoreEos;
        this.http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).version(HttpClient.Version.HTTP_1_1)
                .build();
        JsonNode models = getJson("v1/models");
        String m = model;
        if (m == null) {
            JsonNode first = models == null ? null : models.path("data").path(0).get("id");
            if (first == null) throw new IllegalArgumentException(u + "/v1/models lists no model; pass --served-model");
            m = first.asText();
        }
        this.model = m;
        // A dgr node lists one entry per model under "models"; read this model's. Other servers
        // (or a tracker) may put the fields elsewhere: then the first anywhere in the document.
        JsonNode caps = getJson("v1/capabilities");
        JsonNode entry = modelEntry(caps, m);
        JsonNode src = entry != null ? entry : caps;
        String arch = find(src, "architecture");
        String served = find(src, "artifact_sha256");
        String sha = served != null ? served : artifactSha256;
        String recipe = find(src, "recipe_id");
        int vocab = intOr(find(src, "vocab_size"), -1);
        int rows = intOr(find(src, "max_batch_rows"), -1);
        long perToken = entry == null ? -1 : entry.path("state_layout").path("bytes_per_token").asLong(-1);
        long budget = entry == null ? -1 : entry.path("scheduler").path("state_budget_bytes").asLong(-1);
        this.info = new TargetInfo("http", u, m, arch, arch != null ? TargetInfo.laneOf(arch) : lane,
                recipe, sha, engineOf(src), vocab, intOr(find(src, "context_length"), -1),
                rows, perToken, budget, 1, 2, -1, -1, null,
                perToken > 0 ? "the server's /v1/capabilities state_layout.bytes_per_token (linear layout)" : null);
    }

    /** The ids a server lists under {@code /v1/models}, in its order. */
    public static List<String> servedModels(String url, String apiKey) {
        try (HttpTarget probe = new HttpTarget(url, "", apiKey, null, null, false)) {
            JsonNode models = probe.getJson("v1/models");
            List<String> ids = new java.util.ArrayList<>();
            if (models != null) for (JsonNode d : models.path("data")) if (d.hasNonNull("id")) ids.add(d.get("id").asText());
            return ids;
        }
    }

    /** The element of {@code models} whose {@code id} is {@code model}, or null. */
    static JsonNode modelEntry(JsonNode caps, String model) {
        if (caps == null) return null;
        for (JsonNode e : caps.path("models")) if (model.equals(e.path("id").asText(null))) return e;
        return null;
    }

    /** {@code engine} as text, or a dgr node's engine object's {@code id} ({@code java-simd/1}). */
    static String engineOf(JsonNode n) {
        if (n == null) return null;
        JsonNode e = n.get("engine");
        if (e != null && e.isTextual()) return e.asText();
        if (e != null && e.isObject() && e.hasNonNull("id")) return e.get("id").asText();
        return find(n, "engine");
    }

    private static int intOr(String s, int dflt) {
        try {
            return s == null ? dflt : Integer.parseInt(s);
        } catch (NumberFormatException e) {
            return dflt;
        }
    }

    /** The first value of a field anywhere in a JSON tree, as text; null when absent. */
    static String find(JsonNode n, String field) {
        if (n == null) return null;
        if (n.isObject()) {
            JsonNode v = n.get(field);
            if (v != null && v.isValueNode() && !v.isNull()) return v.asText();
        }
        for (JsonNode c : n) {
            String r = find(c, field);
            if (r != null) return r;
        }
        return null;
    }

    private JsonNode getJson(String path) {
        String body = get(path);
        if (body == null) return null;
        try {
            return JSON.readTree(body);
        } catch (IOException e) {
            return null;
        }
    }

    /** GET a path; null when the server does not answer it with 200. */
    private String get(String path) {
        try {
            HttpRequest.Builder b = HttpRequest.newBuilder(base.resolve(path)).timeout(Duration.ofSeconds(10)).GET();
            if (apiKey != null) b.header("Authorization", "Bearer " + apiKey);
            HttpResponse<String> r = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
            return r.statusCode() == 200 ? r.body() : null;
        } catch (IOException e) {
            if (path.equals("v1/models")) throw new IllegalArgumentException("cannot reach " + base + ": " + e, e);
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    @Override
    public TargetInfo info() { return info; }

    String requestBody(String tenant, RequestSpec spec) {
        ObjectNode body = JSON.createObjectNode();
        body.put("model", model);
        if (spec.promptIds() != null) {
            var arr = body.putArray("prompt");
            for (int id : spec.promptIds()) arr.add(id);
        } else {
            body.put("prompt", spec.promptText());
        }
        body.put("max_tokens", spec.maxTokens());
        body.put("temperature", 0.0);
        body.put("stream", true);
        body.putObject("stream_options").put("include_usage", true);
        body.put("user", tenant);
        if (ignoreEos) body.put("ignore_eos", true);
        return body.toString();
    }

    @Override
    public RequestRecord send(long id, String level, String tenant, int client, RequestSpec spec, long origin)
            throws InterruptedException {
        HttpRequest.Builder b = HttpRequest.newBuilder(base.resolve("v1/completions"))
                .header("Content-Type", "application/json").header("Accept", "text/event-stream")
                // A dgr tracker then names every node that served, also after a resume, in a comment (SseEvents).
                .header("X-Dgr-Node-Comment", "true")
                .POST(HttpRequest.BodyPublishers.ofString(requestBody(tenant, spec)));
        if (apiKey != null) b.header("Authorization", "Bearer " + apiKey);
        long start = System.nanoTime() - origin;
        long[] times = new long[64];
        int n = 0;
        int promptTokens = spec.knownPromptTokens();
        int completion = -1;
        String finish = null;
        String error = null;
        String servedBy = null;
        try {
            HttpResponse<Stream<String>> resp = http.send(b.build(), HttpResponse.BodyHandlers.ofLines());
            // A dgr tracker names the node that served the request (the first, until its comment names all);
            // a node or another server does not.
            servedBy = resp.headers().firstValue("X-Dgr-Node").orElse(null);
            try (Stream<String> lines = resp.body()) {
                if (resp.statusCode() != 200) {
                    error = "HTTP " + resp.statusCode() + ": " + SseEvents.abbreviate(String.join("\n", lines.toList()));
                } else {
                    for (Iterator<String> it = lines.iterator(); it.hasNext(); ) {
                        String line = it.next();
                        long now = System.nanoTime() - origin;
                        switch (SseEvents.parse(line)) {
                            case SseEvents.Line.Chunk c -> {
                                if (n == times.length) times = Arrays.copyOf(times, n * 2);
                                times[n++] = now;
                                String fr = SseEvents.finishReasonOf(line);
                                if (fr != null) finish = fr;
                            }
                            case SseEvents.Line.Finish f -> finish = f.reason();
                            case SseEvents.Line.Usage u -> {
                                if (u.promptTokens() >= 0) promptTokens = u.promptTokens();
                                completion = u.completionTokens();
                            }
                            case SseEvents.Line.Error e -> error = e.message();
                            case SseEvents.Line.ServedBy s -> servedBy = s.nodes();
                            case SseEvents.Line.Done d -> { }
                            case SseEvents.Line.Ignored i -> { }
                        }
                    }
                }
            }
        } catch (IOException e) {
            error = "I/O: " + e.getMessage();
        }
        long end = System.nanoTime() - origin;
        if (error == null && n == 0) error = "the stream carried no tokens";
        long[] t = Arrays.copyOf(times, n);
        return new RequestRecord(id, level, tenant, client, spec.probe(), start, end, t, promptTokens,
                completion >= 0 ? completion : n, n, -1, -1, finish == null ? (error == null ? "unknown" : "error") : finish,
                error, servedBy);
    }

    @Override
    public void beginLevel() {
        String m = get("metrics");
        before = m == null ? null : PrometheusText.parse(m, model);
    }

    @Override
    public ServerObservation endLevel(List<RequestRecord> records, long origin) {
        String m = get("metrics");
        if (m == null || before == null) return ServerObservation.unavailable();
        PrometheusText after = PrometheusText.parse(m, model);
        Summary queue = null;
        String queueNote = "unavailable: the server exports no " + QUEUE;
        TreeMap<Double, Double> qa = after.histogram(QUEUE);
        Double qSum = delta(after, before, QUEUE + "_sum");
        Double qCount = delta(after, before, QUEUE + "_count");
        if (qa != null && qSum != null && qCount != null && qCount > 0) {
            TreeMap<Double, Double> d = PrometheusText.delta(qa, before.histogram(QUEUE));
            queue = new Summary((int) Math.round(qCount), qSum / qCount * 1e3, Double.NaN,
                    PrometheusText.quantile(d, 0.50) * 1e3, PrometheusText.quantile(d, 0.95) * 1e3,
                    PrometheusText.quantile(d, 0.99) * 1e3, Double.NaN);
            queueNote = "server /metrics " + QUEUE + ": mean exact, percentiles interpolated within histogram buckets";
        }
        Double rowSum = delta(after, before, ROWS + "_sum");
        Double rowCount = delta(after, before, ROWS + "_count");
        Double meanRows = rowSum != null && rowCount != null && rowCount > 0 ? rowSum / rowCount : null;
        Double occupancy = meanRows != null && info.rowLimit() > 0 ? meanRows / info.rowLimit() : null;
        Double used = after.value("dgr_state_bytes_used");
        Double budget = after.value("dgr_state_bytes_budget");
        Double rss = after.value("process_resident_memory_bytes");
        return new ServerObservation("server /metrics", List.of(), meanRows, occupancy, null, null, queue, queueNote,
                used, used == null ? null : used.longValue(), budget == null ? null : budget.longValue(),
                rss == null ? null : rss.longValue(), null, PipelineBubble.between(before, after));
    }

    private static Double delta(PrometheusText after, PrometheusText before, String name) {
        Double a = after.value(name);
        if (a == null) return null;
        Double b = before.value(name);
        return a - (b == null ? 0 : b);
    }

    @Override
    public void close() { http.close(); }
}
