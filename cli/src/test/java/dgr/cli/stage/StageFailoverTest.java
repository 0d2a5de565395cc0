package dgr.cli.stage;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dgr.cli.process.DgrProcess;
import dgr.gguf.synth.QuantMix;
import dgr.gguf.synth.Synth;
import dgr.gguf.synth.SynthPreset;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Item 5 of issue 23 with real processes on 127.0.0.1: a route of a head [0,1), a middle hop [1,3)
 * with three interchangeable stages (B1|B2|B3) and a last stage [3,4), serving 8 concurrent streams.
 * {@code kill -9} of the middle stage, then {@code kill -STOP} of its replacement, mid-decode: every
 * client's text equals the failure-free run's, no error, nothing lost or repeated. With no alternate
 * left, the streams end with an OpenAI-shaped 503 and the last stage frees their state.
 */
class StageFailoverTest {
    static final String TOKEN = "failover-test-token";
    static final int SESSIONS = 8, MAX_TOKENS = 48;
    static final SynthPreset LLAMA_TINY4 = new SynthPreset("llama-tiny4", "llama", 256, 4, 4, 2, 768, 2048, 10000f, false, "tiny-gpt2");
    static Path dir, model;
    static final List<DgrProcess> processes = new ArrayList<>();
    static DgrProcess head, b1, b2, b3, last;
    static int headPort, lastHttp;

    @BeforeAll
    static void startRoute() throws Exception {
        dir = Files.createTempDirectory("dgr-stage-failover");
        model = dir.resolve("llama-tiny4-Q4_0.gguf");
        Synth.write(LLAMA_TINY4, QuantMix.parse("Q4_0"), 7, model);
        int pLast = DgrProcess.freePort(), p1 = DgrProcess.freePort(), p2 = DgrProcess.freePort(), p3 = DgrProcess.freePort();
        lastHttp = DgrProcess.freePort();
        last = stage("last", "3:4", pLast, lastHttp);
        b1 = stage("b1", "1:3", p1, DgrProcess.freePort());
        b2 = stage("b2", "1:3", p2, DgrProcess.freePort());
        b3 = stage("b3", "1:3", p3, DgrProcess.freePort());
        headPort = DgrProcess.freePort();
        String route = "127.0.0.1:" + p1 + "|127.0.0.1:" + p2 + "|127.0.0.1:" + p3 + ",127.0.0.1:" + pLast;
        // A 1 s floor (default 250 ms): this machine is shared by many builds and stalls a process for
        // hundreds of ms; a hung stage is still told from the missing reply, only a little later.
        head = start("head", List.of("serve", "-m", model.toString(), "-a", "m", "--layers", "0:1", "--route", route,
                "--cluster-token", TOKEN, "--port", String.valueOf(headPort), "-t", "1", "--stage-reply-floor", "1s"), headPort);
    }

    static DgrProcess stage(String name, String layers, int stagePort, int httpPort) {
        return start(name, List.of("serve", "-m", model.toString(), "--layers", layers, "--stage-port", String.valueOf(stagePort),
                "--cluster-token", TOKEN, "--port", String.valueOf(httpPort), "-t", "1", "--stage-orphan-grace", "2s", "--stage-reply-floor", "1s"), httpPort);
    }

    static DgrProcess start(String name, List<String> args, int httpPort) {
        DgrProcess p = DgrProcess.start(name, dir.resolve("logs"), args);
        processes.add(p);
        return p.awaitHealthy("http://127.0.0.1:" + httpPort, Duration.ofSeconds(60));
    }

    @AfterAll
    static void stopAll() {
        for (DgrProcess p : processes) p.close();
    }

    @Test
    void streamsSurviveKill9AndSigstopOfAStageBitForBitAndEndWith503WhenNoAlternateIsLeft() throws Exception {
        String base = "http://127.0.0.1:" + headPort;
        List<Streams.Result> reference = Streams.join(Streams.start(base, SESSIONS, MAX_TOKENS));
        for (Streams.Result r : reference) {
            assertThat(r.error).as("failure-free run").isNull();
            assertThat(r.chunks.get()).isEqualTo(MAX_TOKENS);
        }

        // kill -9 of the middle stage while 8 sessions decode: they move to b2 and continue.
        List<Streams.Result> killed = runAndDisrupt(base, b1::kill9);
        assertSameTexts(killed, reference, "after kill -9 of b1");
        // Accounting keeps the dead span's work apart: b2 computed again the positions b1 had.
        assertThat(headStage(base).path("recomputed_tokens").asLong()).as("recomputed tokens after kill -9").isPositive();

        // kill -STOP of its replacement: no broken stream; its silence (no reply, no pulse) or the reply deadline tells; they move to b3.
        List<Streams.Result> stopped = runAndDisrupt(base, b2::suspend);
        assertSameTexts(stopped, reference, "after kill -STOP of b2");
        System.out.println("longest gap a client saw: kill -9 " + longestGap(killed) + " ms, kill -STOP " + longestGap(stopped) + " ms");

        // No alternate left: the streams end with a 503-shaped error, and every stage frees their state.
        List<Streams.Result> lost = runAndDisrupt(base, b3::kill9);
        for (Streams.Result r : lost) {
            assertThat(r.error).as("stream after the last alternate died").contains("route_unavailable");
        }
        await(Duration.ofSeconds(15), "the last stage freed every session", () -> lastSessions() == 0);
        // Back to idle everywhere alive: the last stage holds no state, the head keeps no rows and has nothing in flight.
        assertThat(lastStage().path("state_bytes").asLong()).as("last stage's state bytes").isZero();
        await(Duration.ofSeconds(15), "the head kept no rows and had no micro-batch in flight",
                () -> stageOrEmpty(base).path("kept_row_bytes").asLong(-1) == 0 && stageOrEmpty(base).path("batches_in_flight").asInt(-1) == 0);
        HttpResponse<String> after = post(base, Streams.body(0, 4).replace("\"stream\":true", "\"stream\":false"));
        assertThat(after.statusCode()).isEqualTo(503);
        assertThat(Streams.JSON.readTree(after.body()).path("error").path("code").asText()).isEqualTo("route_unavailable");
    }

    /** Starts 8 streams, runs {@code disruption} once the first has 6 chunks, and waits for all to end. */
    static List<Streams.Result> runAndDisrupt(String base, Runnable disruption) {
        List<CompletableFuture<Streams.Result>> fs = Streams.start(base, SESSIONS, MAX_TOKENS);
        List<Streams.Result> running = new ArrayList<>(Streams.results);
        await(Duration.ofSeconds(60), "six chunks on the first stream", () -> running.getFirst().chunks.get() >= 6 || fs.getFirst().isDone());
        disruption.run();
        return Streams.join(fs);
    }

    static void assertSameTexts(List<Streams.Result> got, List<Streams.Result> reference, String when) {
        for (int i = 0; i < got.size(); i++) {
            assertThat(got.get(i).error).as("%s: session %d error", when, i).isNull();
            assertThat(got.get(i).chunks.get()).as("%s: session %d chunks", when, i).isEqualTo(MAX_TOKENS);
            assertThat(got.get(i).text.toString()).as("%s: session %d text", when, i).isEqualTo(reference.get(i).text.toString());
        }
    }

    static long longestGap(List<Streams.Result> rs) {
        return rs.stream().mapToLong(Streams.Result::longestGapMillis).max().orElse(0);
    }

    static JsonNode headStage(String base) throws Exception {
        HttpResponse<String> r = Streams.HTTP.send(HttpRequest.newBuilder(URI.create(base + "/v1/capabilities")).build(),
                HttpResponse.BodyHandlers.ofString());
        return Streams.JSON.readTree(r.body()).path("stage");
    }

    static int lastSessions() {
        return lastStage().path("sessions").asInt(-1);
    }

    /** The last stage's capabilities' stage object, or an empty node when it does not answer. */
    static JsonNode lastStage() {
        return stageOrEmpty("http://127.0.0.1:" + lastHttp);
    }

    static JsonNode stageOrEmpty(String base) {
        try {
            return headStage(base);
        } catch (Exception e) {
            return Streams.JSON.createObjectNode();
        }
    }

    static HttpResponse<String> post(String base, String body) throws Exception {
        return Streams.HTTP.send(HttpRequest.newBuilder(URI.create(base + "/v1/completions")).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    static void await(Duration timeout, String what, BooleanSupplier condition) {
        long end = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - end > 0) throw new AssertionError("not within " + timeout + ": " + what);
            java.util.concurrent.locks.LockSupport.parkNanos(10_000_000);
        }
    }
}
