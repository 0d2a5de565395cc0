package dgr.cli.stage;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dgr.cli.process.DgrProcess;
import dgr.gguf.synth.QuantMix;
import dgr.gguf.synth.Synth;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Item 5 of issue 23 with the tracker supplying the alternate, as real processes on 127.0.0.1: a
 * {@code dgr tracker}, two stages s1 and s2 serving [1,4) that join it, and a head [0,1) whose
 * {@code --route} names only s1 and that joins it too. {@code kill -9} of s1 while 4 streams decode:
 * every stream finishes on s2, which only the tracker named, with the failure-free run's text bit for bit;
 * a head started afterwards with a route whose only stage is dead serves through s2.
 */
class TrackerAlternateFailoverTest {
    static final String CLUSTER = "alternates-cluster-token", NODE = "alternates-node-token";
    static final int SESSIONS = 4, MAX_TOKENS = 32;
    /**
     * A kill -9 breaks the stream at once, so the reply deadline plays no part here; a floor well above the
     * stalls of a machine shared by many builds (load 40: a stage stalled past a 1 s floor) keeps a
     * failure-free run from calling a live stage hung.
     */
    static final String FLOOR = "5s";
    static final List<DgrProcess> processes = new ArrayList<>();
    static Path dir, model;
    static DgrProcess s1;
    static String tracker;
    static int headPort, p1, p2;

    @BeforeAll
    static void startCluster() throws Exception {
        dir = Files.createTempDirectory("dgr-tracker-alternates");
        model = dir.resolve("llama-tiny4-Q4_0.gguf");
        Synth.write(StageFailoverTest.LLAMA_TINY4, QuantMix.parse("Q4_0"), 7, model);
        int trackerPort = DgrProcess.freePort();
        tracker = "http://127.0.0.1:" + trackerPort;
        start("tracker", List.of("tracker", "--port", String.valueOf(trackerPort), "--node-token", NODE, "--admin-token", "admin",
                "--db", "jdbc:sqlite:" + dir.resolve("ledger.db")), trackerPort);
        p1 = DgrProcess.freePort();
        p2 = DgrProcess.freePort();
        s1 = stage("s1", model, p1, tracker);
        stage("s2", model, p2, tracker);
        headPort = DgrProcess.freePort();
        start("head", List.of("serve", "-m", model.toString(), "-a", "m", "--layers", "0:1", "--route", "127.0.0.1:" + p1,
                "--cluster-token", CLUSTER, "--port", String.valueOf(headPort), "-t", "1", "--stage-reply-floor", FLOOR,
                "--tracker", tracker, "--node-token", NODE), headPort);
    }

    static DgrProcess stage(String name, Path model, int stagePort, String tracker) {
        return start(name, List.of("serve", "-m", model.toString(), "--layers", "1:4", "--stage-port", String.valueOf(stagePort),
                "--cluster-token", CLUSTER, "-t", "1", "--stage-orphan-grace", "2s", "--stage-reply-floor", FLOOR,
                "--port", String.valueOf(DgrProcess.freePort()), "--tracker", tracker, "--node-token", NODE), -1);
    }

    static DgrProcess start(String name, List<String> args, int httpPort) {
        DgrProcess p = DgrProcess.start(name, dir.resolve("logs"), args);
        processes.add(p);
        int port = httpPort > 0 ? httpPort : Integer.parseInt(args.get(args.indexOf("--port") + 1));
        // The tracker's first start migrates its ledger: over a minute at load 40 on the shared build machine.
        return p.awaitHealthy("http://127.0.0.1:" + port, Duration.ofSeconds(180));
    }

    @AfterAll
    static void stopAll() {
        for (DgrProcess p : processes) p.close();
    }

    @Test
    void streamsMoveToAStageOnlyTheTrackerNamedWhenTheRoutesStageIsKilledAndKeepTheirBits() throws Exception {
        String base = "http://127.0.0.1:" + headPort;
        String s2 = "127.0.0.1:" + p2;
        StageFailoverTest.await(Duration.ofSeconds(30), "the tracker's s2 among the head's alternates",
                () -> alternates(base).equals(List.of(s2)));
        List<Streams.Result> reference = Streams.join(Streams.start(base, SESSIONS, MAX_TOKENS));
        for (Streams.Result r : reference) {
            assertThat(r.error).as("failure-free run").isNull();
            assertThat(r.chunks.get()).isEqualTo(MAX_TOKENS);
        }

        List<CompletableFuture<Streams.Result>> fs = Streams.start(base, SESSIONS, MAX_TOKENS);
        List<Streams.Result> running = new ArrayList<>(Streams.results);
        StageFailoverTest.await(Duration.ofSeconds(60), "six chunks on the first stream",
                () -> running.getFirst().chunks.get() >= 6 || fs.getFirst().isDone());
        s1.kill9();
        List<Streams.Result> killed = Streams.join(fs);
        for (int i = 0; i < SESSIONS; i++) {
            assertThat(killed.get(i).error).as("session %d error", i).isNull();
            assertThat(killed.get(i).chunks.get()).as("session %d chunks", i).isEqualTo(MAX_TOKENS);
            assertThat(killed.get(i).text.toString()).as("session %d text", i).isEqualTo(reference.get(i).text.toString());
        }
        JsonNode stage = StageFailoverTest.headStage(base);
        assertThat(stage.path("recovered_sessions").asLong()).as("sessions moved to s2").isGreaterThanOrEqualTo(SESSIONS);
        List<String> live = new ArrayList<>();
        stage.path("neighbours").path("downstream").forEach(n -> live.add(n.asText()));
        assertThat(live).as("the head's live links after the kill").containsExactly(s2);

        // A head started now with a route whose only stage is dead is ready through the tracker's s2 and
        // serves the same bits, opening its sessions there (the stage that answered its warm-up), not on s1.
        int late = DgrProcess.freePort();
        start("late-head", List.of("serve", "-m", model.toString(), "-a", "m", "--layers", "0:1", "--route", "127.0.0.1:" + p1,
                "--cluster-token", CLUSTER, "--port", String.valueOf(late), "-t", "1", "--stage-reply-floor", FLOOR,
                "--tracker", tracker, "--node-token", NODE), late);
        List<Streams.Result> fromLate = Streams.join(Streams.start("http://127.0.0.1:" + late, 2, MAX_TOKENS));
        for (int i = 0; i < 2; i++) {
            assertThat(fromLate.get(i).error).as("late head, session %d error", i).isNull();
            assertThat(fromLate.get(i).text.toString()).as("late head, session %d text", i).isEqualTo(reference.get(i).text.toString());
        }
        assertThat(StageFailoverTest.headStage("http://127.0.0.1:" + late).path("recovered_sessions").asLong())
                .as("sessions the late head moved: none, they opened on s2").isZero();
    }

    static List<String> alternates(String base) {
        try {
            List<String> out = new ArrayList<>();
            StageFailoverTest.headStage(base).path("neighbours").path("tracker_alternates").path(0).forEach(a -> out.add(a.asText()));
            return out;
        } catch (Exception e) {
            return List.of();
        }
    }
}
