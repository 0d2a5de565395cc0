package dgr.bench;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.networknt.schema.JsonSchemaFactory;
import com.networknt.schema.SpecVersion;
import dgr.engine.Engine;
import dgr.engine.StateLayout;
import dgr.gguf.synth.SynthPreset;
import dgr.node.ModelSpec;
import dgr.node.NodeServer;
import dgr.node.model.ServedModel;
import dgr.runtime.CompatibilityKey;
import dgr.runtime.SchedulerEvent;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The two lanes side by side: a node serving a llama and a deepseek4 model under concurrent load to
 * both never puts the two architectures in one batch, and the benchmark measures and writes each lane
 * on its own, over HTTP and in-process.
 */
class MixedLaneTest {
    static final String DENSE = "llama-tiny";
    static final String V4 = "dsv4-tiny";
    @TempDir
    static Path dir;
    static Path llama;
    static Path dsv4;
    static NodeServer node;
    static final Map<String, ConcurrentLinkedQueue<SchedulerEvent.IterationEvent>> iterations = new ConcurrentHashMap<>();

    @BeforeAll
    static void startMixedNode() {
        llama = LocalNode.synth(dir, SynthPreset.LLAMA_TINY);
        dsv4 = LocalNode.synth(dir, SynthPreset.DSV4_TINY);
        node = LocalNode.start(LocalNode.config(List.of(new ModelSpec(llama, DENSE), new ModelSpec(dsv4, V4))));
        for (ServedModel m : node.models().all()) {
            var seen = new ConcurrentLinkedQueue<SchedulerEvent.IterationEvent>();
            iterations.put(m.id(), seen);
            m.scheduler().addListener(e -> {
                if (e instanceof SchedulerEvent.IterationEvent it) seen.add(it);
            });
        }
    }

    @AfterAll
    static void stop() {
        if (node != null) node.close();
    }

    @Test
    void concurrentLoadToBothModelsNeverBatchesAcrossArchitectures() throws Exception {
        iterations.values().forEach(ConcurrentLinkedQueue::clear);
        HttpClient http = HttpClient.newHttpClient();
        List<Future<HttpResponse<String>>> sent = new ArrayList<>();
        try (var pool = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int i = 0; i < 12; i++) {
                String model = i % 2 == 0 ? DENSE : V4;
                // llama-tiny is so fast that short requests could finish before their neighbours
                // arrive; 48 tokens keep its sessions running together.
                int maxTokens = model.equals(DENSE) ? 48 : 6;
                String body = "{\"model\":\"" + model + "\",\"prompt\":[" + (1 + i) + ",7,9,11,13],\"max_tokens\":"
                        + maxTokens + ",\"temperature\":0}";
                sent.add(pool.submit(() -> http.send(HttpRequest.newBuilder(URI.create(LocalNode.url(node) + "/v1/completions"))
                        .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                        HttpResponse.BodyHandlers.ofString())));
            }
            for (Future<HttpResponse<String>> f : sent) assertThat(f.get().statusCode()).as(f.get().body()).isEqualTo(200);
        }
        Set<String> architectures = new java.util.HashSet<>();
        for (ServedModel m : node.models().all()) {
            Engine e = m.engine();
            List<SchedulerEvent.IterationEvent> its = List.copyOf(iterations.get(m.id()));
            assertThat(its).as(m.id()).isNotEmpty();
            assertThat(its.stream().mapToInt(SchedulerEvent.IterationEvent::sessions).max().orElse(0))
                    .as("some batch of %s held several sessions", m.id()).isGreaterThan(1);
            // Every batch this model's scheduler ran has exactly this model's key: its recipe, its
            // architecture's boundary schema and state layout.
            Set<String> recipes = its.stream().map(it -> it.key().recipeId()).collect(Collectors.toSet());
            Set<String> schemas = its.stream().map(it -> it.key().boundarySchemaId()).collect(Collectors.toSet());
            Set<String> layouts = its.stream().map(it -> it.key().stateLayoutId()).collect(Collectors.toSet());
            assertThat(recipes).containsExactly(e.recipe().id());
            assertThat(schemas).containsExactly(e.boundarySchema().id());
            assertThat(layouts).containsExactly(e.stateLayout().id());
            architectures.add(e.boundarySchema().architecture());
        }
        assertThat(architectures).containsExactlyInAnyOrder("llama", "deepseek4");
        CompatibilityKey dense = iterations.get(DENSE).peek().key();
        CompatibilityKey v4 = iterations.get(V4).peek().key();
        assertThat(dense.recipeId()).isNotEqualTo(v4.recipeId());
        assertThat(dense.boundarySchemaId()).isNotEqualTo(v4.boundarySchemaId());
        assertThat(dense.stateLayoutId()).isNotEqualTo(v4.stateLayoutId());
        // The node's /metrics keeps the batches apart too: each model's dgr_batch_rows counts its own.
        String metrics = LocalNode.get(node, "/metrics");
        for (String id : List.of(DENSE, V4)) {
            Double count = dgr.bench.target.PrometheusText.parse(metrics, id).value("dgr_batch_rows_count");
            assertThat(count).as(id).isGreaterThanOrEqualTo((double) iterations.get(id).size());
        }
    }

    @Test
    void benchOverHttpMeasuresAndWritesBothLanesSeparately() throws Exception {
        Path out = dir.resolve("http-both");
        Bench.Outcome o = new Bench(BenchConfig.builder().url(LocalNode.url(node)).concurrency(List.of(1, 2))
                .requestsPerLevel(4).promptTokens(IntRange.parse("8:12")).maxTokens(IntRange.fixed(4)).warmup(0)
                .duration(Duration.ofSeconds(15)).out(out).build(), null).run();
        JsonNode result = LocalNode.JSON.readTree(out.resolve("bench-result.json").toFile());
        Map<String, JsonNode> byLane = new java.util.HashMap<>();
        for (JsonNode run : result.get("runs")) byLane.put(run.at("/target/lane").asText(), run);
        assertThat(byLane).containsOnlyKeys("dense", "v4");
        assertThat(byLane.get("dense").at("/target/model_name").asText()).isEqualTo(DENSE);
        assertThat(byLane.get("v4").at("/target/model_name").asText()).isEqualTo(V4);
        assertThat(byLane.get("v4").at("/target/architecture").asText()).isEqualTo("deepseek4");

        JsonNode sat = LocalNode.JSON.readTree(out.resolve("saturation.json").toFile());
        assertThat(JsonSchemaFactory.getInstance(SpecVersion.VersionFlag.V202012)
                .getSchema(Files.readString(TinyModel.schema())).validate(sat)).isEmpty();
        assertThat(sat.get("lanes_not_measured")).isEmpty();
        Map<String, String> recipeByLane = new java.util.HashMap<>();
        for (JsonNode r : sat.get("recommendations")) recipeByLane.put(r.get("lane").asText(), r.get("recipe_id").asText());
        assertThat(recipeByLane).containsOnlyKeys("dense", "v4");
        assertThat(recipeByLane.get("dense")).isEqualTo(node.models().find(DENSE).orElseThrow().engine().recipe().id());
        assertThat(recipeByLane.get("v4")).isEqualTo(node.models().find(V4).orElseThrow().engine().recipe().id());
        for (var run : o.result().runs()) {
            for (var level : run.levels()) {
                assertThat(level.failed()).as(run.target().lane() + " " + level.label()).isZero();
                assertThat(level.consistency().tokensCounted()).isEqualTo(level.consistency().tokensGenerated());
                assertThat(level.batch().occupancy()).isPositive().isLessThanOrEqualTo(1.0);
            }
        }
    }

    @Test
    void inProcessV4LaneReportsItsOwnRecipeAndItsNonLinearStateBytes() throws Exception {
        Path out = dir.resolve("v4-in-process");
        Bench.Outcome o = new Bench(BenchConfig.builder().model(dsv4).lane("v4").concurrency(List.of(1, 2))
                .requestsPerLevel(4).promptTokens(IntRange.fixed(12)).maxTokens(IntRange.fixed(4)).warmup(0)
                .engine(dgr.engine.EngineOptions.defaults().withThreads(1)).duration(Duration.ofSeconds(15)).out(out)
                .build(), null).run();
        assertThat(o.result().runs()).hasSize(1);
        var rec = o.saturation().recommendations().getFirst();
        assertThat(rec.lane()).isEqualTo("v4");
        assertThat(rec.architecture()).isEqualTo("deepseek4");
        Engine e = node.models().find(V4).orElseThrow().engine();
        assertThat(rec.recipeId()).isEqualTo(e.recipe().id());
        // 12 prompt + 4 generated tokens: what such a session reserves, per token, rounded up.
        StateLayout layout = e.stateLayout();
        assertThat(rec.stateBytesPerToken()).isEqualTo((layout.bytesForTokens(16) + 15) / 16);
        assertThat(rec.stateBytesPerTokenBasis()).startsWith("not linear").contains("16-token");
        assertThat(o.saturation().lanesNotMeasured()).extracting(l -> l.lane()).containsExactly("dense");
        for (var level : o.result().runs().getFirst().levels()) {
            assertThat(level.consistency().consistent()).as(level.label() + " " + level.consistency()).isTrue();
            assertThat(level.failed()).isZero();
        }
    }
}
