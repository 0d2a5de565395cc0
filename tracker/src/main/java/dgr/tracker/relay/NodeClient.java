package dgr.tracker.relay;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * The tracker's side of the wire to nodes: one HTTP/1.1 client for every relayed request and poll,
 * and a watchdog that aborts a node's stream silent for longer than {@code chunkTimeout} (a node that
 * hangs without closing its socket; a killed node's socket closes at once and needs no watchdog).
 */
public final class NodeClient implements AutoCloseable {
    private final HttpClient http;
    private final Duration firstByteTimeout;
    private final Duration chunkTimeout;
    private final ScheduledExecutorService watchdog;
    private final ObjectMapper mapper = new ObjectMapper();

    public NodeClient(Duration connectTimeout, Duration firstByteTimeout, Duration chunkTimeout, String nodeToken) {
        this.http = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(connectTimeout)
                .executor(Executors.newVirtualThreadPerTaskExecutor())
                .build();
        this.firstByteTimeout = firstByteTimeout;
        this.chunkTimeout = chunkTimeout;
        this.watchdog = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "dgr-tracker-relay-watchdog");
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * POSTs a JSON body and returns as soon as the response headers arrive; the body is read by the caller.
     * Headers not there within {@code firstByteTimeout} (prefill included) count as a failed node.
     */
    public HttpResponse<InputStream> post(URI base, String path, String bearer, Map<String, String> headers,
                                          byte[] body) throws IOException, InterruptedException {
        HttpRequest.Builder b = HttpRequest.newBuilder(base.resolve(path))
                .timeout(firstByteTimeout)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofByteArray(body));
        if (bearer != null) b.header("Authorization", "Bearer " + bearer);
        headers.forEach(b::header);
        return http.send(b.build(), HttpResponse.BodyHandlers.ofInputStream());
    }

    /** GETs a JSON document (an OpenAI backend's /v1/models), within {@code timeout}. */
    public JsonNode getJson(URI base, String path, String bearer, Duration timeout) throws IOException, InterruptedException {
        HttpRequest.Builder b = HttpRequest.newBuilder(base.resolve(path)).timeout(timeout).GET();
        if (bearer != null) b.header("Authorization", "Bearer " + bearer);
        HttpResponse<byte[]> r = http.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
        if (r.statusCode() != 200) throw new IOException(path + " answered HTTP " + r.statusCode());
        return mapper.readTree(r.body());
    }

    /** Watches a node's stream: {@link Watch#progress} on every line, abort after {@code chunkTimeout} of silence. */
    public Watch watch(InputStream stream) {
        return new Watch(stream);
    }

    public final class Watch implements AutoCloseable {
        private final InputStream stream;
        private volatile long lastNanos = System.nanoTime();
        private volatile boolean expired;
        private final ScheduledFuture<?> task;

        private Watch(InputStream stream) {
            this.stream = stream;
            long period = Math.max(50, chunkTimeout.toMillis() / 4);
            this.task = watchdog.scheduleAtFixedRate(this::check, period, period, TimeUnit.MILLISECONDS);
        }

        public void progress() { lastNanos = System.nanoTime(); }

        /** Whether the watchdog cut the stream for silence. */
        public boolean expired() { return expired; }

        private void check() {
            if (System.nanoTime() - lastNanos > chunkTimeout.toNanos()) {
                expired = true;
                task.cancel(false);
                try {
                    stream.close();
                } catch (IOException ignored) {
                    // The reader sees the closed stream either way.
                }
            }
        }

        @Override
        public void close() { task.cancel(false); }
    }

    @Override
    public void close() {
        watchdog.shutdownNow();
        http.shutdownNow();
    }
}
