package dgr.cli.tracker;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dgr.cli.process.DgrProcess;
import dgr.gguf.synth.QuantMix;
import dgr.gguf.synth.Synth;
import dgr.gguf.synth.SynthPreset;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Real processes: {@code dgr tracker} and two {@code dgr serve --tracker} nodes. A node is {@code kill -9}ed
 * while it streams to several clients; every client's stream completes, without an error, with the text a
 * failure-free run gives.
 */
class TrackerKill9Test {
    private static final String NODE_TOKEN = "kill9-node-token";
    private static final String ADMIN = "kill9-admin";
    private static final int CLIENTS = 4;
    private static final ObjectMapper JSON = new ObjectMapper();
    private final HttpClient http = HttpClient.newHttpClient();

    @TempDir Path dir;

    @Test
    void aNodeKilledMidStreamLosesNoClientAndNoTokenAndTheTextsEqualAFailureFreeRun() throws Exception {
        Path model = dir.resolve("llama-tiny.gguf");
        Synth.write(SynthPreset.LLAMA_TINY, QuantMix.parse("Q4_0"), 42, model);
        int trackerPort = DgrProcess.freePort();
        String tracker = "http://127.0.0.1:" + trackerPort;
        try (DgrProcess t = DgrProcess.start("tracker", dir, List.of("tracker", "--port", Integer.toString(trackerPort),
                "--node-token", NODE_TOKEN, "--admin-token", ADMIN,
                // A ledger of its own: the default file is shared with every other tracker on this machine.
                "--db", "jdbc:sqlite:" + dir.resolve("ledger.db")))) {
            t.awaitHealthy(tracker, Duration.ofSeconds(60));
            List<DgrProcess> nodes = new ArrayList<>();
            try {
                for (int i = 0; i < 2; i++) {
                    int port = DgrProcess.freePort();
                    nodes.add(DgrProcess.start("node" + i, dir, List.of("serve", "-m", model.toString(), "-a", "tiny",
                            "--port", Integer.toString(port), "--threads", "1", "--max-batch-rows", "8",
                            "--tracker", tracker, "--node-token", NODE_TOKEN)));
                }
                awaitHealthyNodes(tracker, 2);

                List<String> reference = run(tracker, null);
                List<String> withKill = run(tracker, nodes);
                assertThat(withKill).isEqualTo(reference);
                assertThat(String.join("", reference)).isNotEmpty();
                JsonNode list = JSON.readTree(get(tracker + "/v1/nodes", "Bearer " + ADMIN).body()).path("data");
                long healthy = 0;
                for (JsonNode n : list) if (n.path("healthy").asBoolean()) healthy++;
                assertThat(healthy).as("the killed node is out of routing").isEqualTo(1);
                assertThat(t.log()).as("streams were resumed, not restarted").contains("resuming after");
            } finally {
                for (DgrProcess n : nodes) n.close();
            }
        }
    }

    /**
     * {@value #CLIENTS} concurrent streams with fixed seeds; with {@code nodes}, the node serving the most of
     * them is killed with SIGKILL once every client has its first chunks. Returns each client's text, or
     * fails on any error event, HTTP error or missing [DONE].
     */
    private List<String> run(String tracker, List<DgrProcess> nodes) throws Exception {
        CountDownLatch started = new CountDownLatch(CLIENTS);
        try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
            List<Future<String>> texts = new ArrayList<>();
            for (int i = 0; i < CLIENTS; i++) {
                int seed = i;
                texts.add(pool.submit(() -> stream(tracker, seed, started)));
            }
            if (nodes != null) {
                assertThat(started.await(60, TimeUnit.SECONDS)).isTrue();
                DgrProcess victim = busiest(tracker, nodes);
                victim.kill9();
            }
            List<String> out = new ArrayList<>();
            for (Future<String> f : texts) out.add(f.get(120, TimeUnit.SECONDS));
            return out;
        }
    }

    private String stream(String tracker, int seed, CountDownLatch started) throws IOException, InterruptedException {
        String body = "{\"model\":\"tiny\",\"prompt\":\"Story number " + seed + ":\",\"max_tokens\":800,\"stream\":true,"
                + "\"ignore_eos\":true,\"temperature\":0.8,\"seed\":" + seed + "}";
        HttpRequest req = HttpRequest.newBuilder(URI.create(tracker + "/v1/completions")).timeout(Duration.ofSeconds(120))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build();
        HttpResponse<Stream<String>> r = http.send(req, HttpResponse.BodyHandlers.ofLines());
        assertThat(r.statusCode()).isEqualTo(200);
        StringBuilder text = new StringBuilder();
        boolean done = false;
        int chunks = 0;
        try (Stream<String> lines = r.body()) {
            for (String line : (Iterable<String>) lines::iterator) {
                if (!line.startsWith("data: ")) continue;
                if (line.equals("data: [DONE]")) {
                    done = true;
                    continue;
                }
                JsonNode c = JSON.readTree(line.substring(6));
                assertThat(c.has("error")).as("error event: " + line).isFalse();
                text.append(c.path("choices").path(0).path("text").asText(""));
                if (++chunks == 5) started.countDown();
            }
        }
        assertThat(done).as("the stream ended with [DONE]").isTrue();
        return text.toString();
    }

    /** The node process whose port has the most running sessions in the tracker's view. */
    private DgrProcess busiest(String tracker, List<DgrProcess> nodes) throws IOException {
        JsonNode list = JSON.readTree(get(tracker + "/v1/nodes", "Bearer " + ADMIN).body()).path("data");
        String url = null;
        int most = -1;
        for (JsonNode n : list) {
            if (n.path("running").asInt() > most) {
                most = n.path("running").asInt();
                url = n.path("url").asText();
            }
        }
        for (DgrProcess p : nodes) if (p.log().contains(url.replaceAll("/$", ""))) return p;
        throw new AssertionError("no node process listens at " + url);
    }

    private void awaitHealthyNodes(String tracker, int n) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (true) {
            JsonNode list = JSON.readTree(get(tracker + "/v1/nodes", "Bearer " + ADMIN).body()).path("data");
            int healthy = 0;
            for (JsonNode node : list) if (node.path("healthy").asBoolean()) healthy++;
            if (healthy == n) return;
            if (System.nanoTime() > deadline) throw new AssertionError("nodes did not join: " + list);
            Thread.sleep(100); // polling another process's state, not waiting for time
        }
    }

    private HttpResponse<String> get(String url, String auth) {
        try {
            return http.send(HttpRequest.newBuilder(URI.create(url)).header("Authorization", auth).build(),
                    HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
