package dgr.bench;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dgr.bench.metrics.LevelMetrics;
import dgr.bench.metrics.Summary;
import dgr.bench.target.PrometheusText;
import dgr.bench.target.RequestRecord;
import dgr.bench.target.TargetInfo;
import dgr.engine.EngineOptions;
import dgr.gguf.synth.SynthPreset;
import dgr.node.ModelSpec;
import dgr.node.NodeServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The benchmark against a real dgr node over HTTP, and the node reading what the benchmark wrote:
 * an in-process sweep on llama-tiny writes saturation.json, a node started with it serves under its
 * recommendation, and an HTTP sweep against that node must agree with the node's own counters.
 */
class HttpSweepTest {
    static final String MODEL = "llama-tiny";
    @TempDir
    static Path dir;
    static Path model;
    static Path saturation;
    static NodeServer node;
    static Bench.Outcome http;
    static double serverGeneratedDelta;

    @BeforeAll
    static void measureThenServeThenMeasureOverHttp() throws Exception {
        model = LocalNode.synth(dir, SynthPreset.LLAMA_TINY);
        Path inProcessOut = dir.resolve("in-process");
        new Bench(BenchConfig.builder().model(model).concurrency(List.of(1, 2, 4)).requestsPerLevel(6)
                .promptTokens(IntRange.parse("8:16")).maxTokens(IntRange.parse("4:8")).warmup(2)
                .engine(EngineOptions.defaults().withThreads(1)).duration(Duration.ofSeconds(15)).out(inProcessOut)
                .build(), null).run();
        saturation = inProcessOut.resolve("saturation.json");

        node = LocalNode.start(LocalNode.config(List.of(new ModelSpec(model, MODEL))).withSaturationFile(saturation));
        double before = PrometheusText.parse(LocalNode.get(node, "/metrics"), MODEL).value("dgr_generation_tokens_total");
        http = new Bench(BenchConfig.builder().url(LocalNode.url(node)).concurrency(List.of(1, 2, 4))
                .requestsPerLevel(6).promptTokens(IntRange.parse("8:16")).maxTokens(IntRange.parse("4:8")).warmup(2)
                .duration(Duration.ofSeconds(15)).out(dir.resolve("http")).build(), null).run();
        double after = PrometheusText.parse(LocalNode.get(node, "/metrics"), MODEL).value("dgr_generation_tokens_total");
        serverGeneratedDelta = after - before;
    }

    @AfterAll
    static void stop() {
        if (node != null) node.close();
    }

    @Test
    void aNodeStartedWithTheBenchSaturationFileReportsItAndUsesItsRecommendationAsTheCap() throws Exception {
        JsonNode file = LocalNode.JSON.readTree(saturation.toFile());
        JsonNode rec = file.get("recommendations").get(0);
        int recommended = rec.get("recommended_max_concurrency").asInt();
        JsonNode caps = LocalNode.capabilities(node);
        JsonNode s = caps.get("saturation");
        assertThat(s.get("status").asText()).isEqualTo("loaded");
        assertThat(s.at("/provenance/path").asText()).isEqualTo(saturation.toAbsolutePath().toString());
        assertThat(s.at("/provenance/measured_at").asText()).isEqualTo(file.get("measured_at").asText());
        assertThat(s.at("/provenance/machine/hostname").asText()).isEqualTo(file.at("/machine/hostname").asText());
        assertThat(s.at("/recommendations/0/model").asText()).isEqualTo(MODEL);
        assertThat(s.at("/recommendations/0/artifact_sha256").asText()).isEqualTo(rec.get("artifact_sha256").asText());
        assertThat(s.at("/recommendations/0/recipe_id").asText()).isEqualTo(rec.get("recipe_id").asText());
        assertThat(s.get("ignored")).isEmpty();

        JsonNode m = caps.at("/models/0");
        assertThat(m.get("max_batch_rows").asInt()).isEqualTo(recommended);
        assertThat(m.at("/concurrency_limit/source").asText()).isEqualTo("saturation");
        assertThat(node.models().find(MODEL).orElseThrow().scheduler().config().maxBatchSessions()).isEqualTo(recommended);
    }

    @Test
    void aSaturationFileMeasuredOnAnotherArtifactIsIgnoredWithTheReason() throws Exception {
        ObjectNode other = (ObjectNode) LocalNode.JSON.readTree(saturation.toFile());
        ((ObjectNode) other.get("recommendations").get(0)).put("artifact_sha256", "0f".repeat(32));
        Path file = dir.resolve("other-artifact.json");
        Files.writeString(file, other.toString());
        try (NodeServer n = LocalNode.start(LocalNode.config(List.of(new ModelSpec(model, MODEL))).withSaturationFile(file))) {
            JsonNode caps = LocalNode.capabilities(n);
            assertThat(caps.at("/saturation/status").asText()).isEqualTo("ignored");
            assertThat(caps.at("/saturation/ignored/0/reason").asText()).contains("0f".repeat(32)).contains("does not serve");
            assertThat(caps.at("/models/0/concurrency_limit/source").asText()).isEqualTo("default");
            assertThat(caps.at("/models/0/max_batch_rows").asInt()).isEqualTo(n.models().find(MODEL).orElseThrow()
                    .scheduler().config().maxBatchSessions()).isEqualTo(16);
        }
    }

    @Test
    void theHttpTargetReadsTheModelFromCapabilities() throws Exception {
        TargetInfo info = http.result().runs().getFirst().target();
        JsonNode m = LocalNode.capabilities(node).at("/models/0");
        assertThat(info.kind()).isEqualTo("http");
        assertThat(info.recipeId()).isEqualTo(m.get("recipe_id").asText());
        assertThat(info.artifactSha256()).isEqualTo(m.get("artifact_sha256").asText());
        assertThat(info.architecture()).isEqualTo("llama");
        assertThat(info.lane()).isEqualTo("dense");
        assertThat(info.engine()).isEqualTo(m.at("/engine/id").asText()).startsWith("java-");
        assertThat(info.vocabSize()).isEqualTo(m.get("vocab_size").asInt());
        assertThat(info.contextLength()).isEqualTo(m.get("context_length").asInt());
        assertThat(info.rowLimit()).isEqualTo(m.get("max_batch_rows").asInt());
        assertThat(http.saturation().recommendations().getFirst().recipeId()).isEqualTo(info.recipeId());
    }

    @Test
    void httpSweepCountsAgreeWithTheNodeAndPercentilesAreOrdered() {
        var run = http.result().runs().getFirst();
        long usage = run.requests().stream().mapToLong(RequestRecord::outputTokens).sum();
        assertThat((double) usage).as("completion tokens in usage blocks vs the node's dgr_generation_tokens_total")
                .isEqualTo(serverGeneratedDelta).isPositive();
        for (RequestRecord r : run.requests()) {
            assertThat(r.error()).as("request %d", r.id()).isNull();
            assertThat(r.countedTokens()).as("chunks streamed vs usage, request %d", r.id()).isEqualTo(r.outputTokens());
        }
        for (LevelMetrics m : run.levels()) {
            assertThat(m.completed()).as(m.label()).isEqualTo(6);
            assertThat(m.failed()).isZero();
            assertThat(m.consistency().tokensCounted()).isEqualTo(m.consistency().tokensGenerated()).isPositive();
            for (Summary s : new Summary[] {m.ttftMs(), m.itlMs(), m.e2elMs()}) {
                assertThat(s.min()).isLessThanOrEqualTo(s.p50());
                assertThat(s.p50()).isLessThanOrEqualTo(s.p95());
                assertThat(s.p95()).isLessThanOrEqualTo(s.p99());
                assertThat(s.p99()).isLessThanOrEqualTo(s.max());
            }
            // Server-side numbers come from the node's /metrics, not from the client.
            Summary q = m.queueTimeMs();
            assertThat(m.queueTimeSource()).startsWith("server /metrics");
            assertThat(q.count()).isEqualTo(6);
            assertThat(q.p50()).isLessThanOrEqualTo(q.p95());
            assertThat(q.p95()).isLessThanOrEqualTo(q.p99());
            assertThat(m.batch().source()).isEqualTo("server /metrics");
            assertThat(m.batch().occupancy()).isPositive().isLessThanOrEqualTo(1.0);
            assertThat(m.batch().rowLimit()).isEqualTo(run.target().rowLimit());
        }
    }
}
