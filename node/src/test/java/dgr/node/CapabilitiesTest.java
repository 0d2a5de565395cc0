package dgr.node;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dgr.engine.ArtifactHash;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The capability report: engines, recipes, layouts, schemas, budget, saturation with provenance, load. */
class CapabilitiesTest {
    static String entry(String sha, String recipe, int recommended) {
        return "{\"recipe_id\":\"" + recipe + "\",\"lane\":\"dense\",\"artifact_sha256\":\"" + sha
                + "\",\"knee_concurrency\":4,\"knee_status\":\"knee\",\"recommended_max_concurrency\":" + recommended
                + ",\"measured_at\":\"2025-01-02T03:04:05Z\"}";
    }

    static String saturationJson(String... entries) {
        return "{\"schema_version\":1,\"generated_by\":\"test\",\"measured_at\":\"2025-01-02T03:04:05Z\","
                + "\"machine\":{\"hostname\":\"bench-box\"},\"recommendations\":[" + String.join(",", entries)
                + "],\"lanes_not_measured\":[]}";
    }

    @Test
    void reportsEnginesRecipesLayoutsSchemasAndUsesTheMatchingRecommendationAsTheCap(@TempDir Path dir)
            throws IOException {
        String sha = ArtifactHash.sha256(TestNodes.modelPath());
        String recipe = recipeOfTheTestModel();
        Path sat = dir.resolve("saturation.json");
        // One entry for this artifact and recipe, one for the same artifact under another recipe,
        // one for another artifact: only the first applies.
        Files.writeString(sat, saturationJson(entry(sha, recipe, 3), entry(sha, "00000000deadbeef", 9),
                entry("ab".repeat(32), "0123456789abcdef", 7)));
        try (NodeServer node = TestNodes.start(TestNodes.config().withSaturationFile(sat).withNodeId("node-a"))) {
            var r = new Http(node).get("/v1/capabilities");
            assertThat(r.statusCode()).isEqualTo(200);
            JsonNode c = Http.json(r);
            assertThat(c.get("node_id").asText()).isEqualTo("node-a");
            JsonNode m = c.get("models").get(0);
            assertThat(m.get("id").asText()).isEqualTo("llama-tiny");
            // The default engine: java-q8 where its native kernel runs here, java-simd elsewhere.
            assertThat(m.at("/engine/id").asText()).isEqualTo(
                    (dgr.engine.EngineOptions.Kind.preferred() == dgr.engine.EngineOptions.Kind.Q8 ? "java-q8/" : "java-simd/")
                            + dgr.engine.EngineId.VERSION);
            assertThat(m.at("/engine/features/max_rows").asInt()).isPositive();
            assertThat(m.at("/engine/kernel_memory").asText()).contains("pages").contains("software prefetch").contains("8-bit kernel");
            assertThat(m.at("/engine/workspace_bytes").asLong()).isPositive();
            assertThat(c.at("/memory/workspace_bytes").asLong()).isEqualTo(m.at("/engine/workspace_bytes").asLong());
            assertThat(c.at("/memory/workspace_uncounted_models").asInt()).isZero();
            assertThat(m.at("/recipe/id").asText()).isEqualTo(recipe);
            assertThat(m.at("/recipe/layer_span/0").asInt()).isZero();
            assertThat(m.at("/recipe/layer_span/1").asInt()).isEqualTo(2);
            assertThat(m.at("/recipe/artifact_sha256").asText()).isEqualTo(sha);
            // The flat fields the benchmark's HTTP target reads.
            assertThat(m.get("recipe_id").asText()).isEqualTo(recipe);
            assertThat(m.get("artifact_sha256").asText()).isEqualTo(sha);
            assertThat(m.get("architecture").asText()).isEqualTo("llama");
            assertThat(m.get("vocab_size").asInt()).isPositive();
            assertThat(m.get("context_length").asInt()).isPositive();
            assertThat(m.get("max_batch_rows").asInt()).isEqualTo(3);
            assertThat(m.at("/state_layout/id").asText()).isNotBlank();
            assertThat(m.at("/state_layout/linear_in_tokens").asBoolean()).isTrue();
            assertThat(m.at("/state_layout/bytes_per_token").asLong()).isPositive();
            assertThat(m.at("/state_layout/bytes_for_tokens/128").asLong())
                    .isEqualTo(128 * m.at("/state_layout/bytes_per_token").asLong());
            // The cache types in force and what each would take per token: llama-tiny's 2 layers x K and V x 2 kv heads x 64.
            assertThat(m.at("/state_layout/cache_type_k").asText()).isEqualTo("f32");
            assertThat(m.at("/state_layout/cache_type_v").asText()).isEqualTo("f32");
            assertThat(m.at("/state_layout/bytes_per_token").asLong()).isEqualTo(2048);
            assertThat(m.at("/state_layout/bytes_per_token_by_cache_type").toString())
                    .isEqualTo("{\"f32\":2048,\"f16\":1024,\"bf16\":1024,\"q8_0\":544}");
            assertThat(m.at("/boundary_schema/row_width").asInt()).isEqualTo(256);
            assertThat(c.at("/memory/state_budget_bytes").asLong()).isPositive();
            assertThat(c.at("/load/running").asInt()).isZero();

            // The recommendation is the cap in force, and the report says where it came from.
            assertThat(node.models().find("llama-tiny").orElseThrow().scheduler().config().maxBatchSessions()).isEqualTo(3);
            assertThat(m.at("/scheduler/max_batch_rows").asInt()).isEqualTo(3);
            assertThat(m.at("/concurrency_limit/max_running_sessions").asInt()).isEqualTo(3);
            assertThat(m.at("/concurrency_limit/source").asText()).isEqualTo("saturation");
            assertThat(m.at("/concurrency_limit/detail").asText()).contains(sat.toAbsolutePath().toString())
                    .contains("measured at 2025-01-02T03:04:05Z");

            JsonNode s = c.get("saturation");
            assertThat(s.get("status").asText()).isEqualTo("loaded");
            assertThat(s.at("/provenance/path").asText()).isEqualTo(sat.toAbsolutePath().toString());
            assertThat(s.at("/provenance/measured_at").asText()).isEqualTo("2025-01-02T03:04:05Z");
            assertThat(s.at("/provenance/machine/hostname").asText()).isEqualTo("bench-box");
            assertThat(s.at("/provenance/file_sha256").asText()).hasSize(64);
            assertThat(s.get("recommendations")).hasSize(1);
            assertThat(s.at("/recommendations/0/model").asText()).isEqualTo("llama-tiny");
            assertThat(s.at("/recommendations/0/recommended_max_concurrency").asInt()).isEqualTo(3);
            assertThat(s.get("ignored")).hasSize(2);
            assertThat(s.at("/ignored/0/reason").asText()).contains("recipe 00000000deadbeef differs");
            assertThat(s.at("/ignored/1/reason").asText()).contains("ab".repeat(32)).contains("does not serve");
        }
    }

    @Test
    void aCompactCacheTypeIsTheLayoutAndRecipeAndItsRealBytesAreWhatAdmissionReserves() {
        var eo = dgr.engine.EngineOptions.defaults().withThreads(1)
                .withCacheTypes(new dgr.engine.KvCacheTypes(dgr.engine.KvCacheType.Q8_0, dgr.engine.KvCacheType.F16));
        try (NodeServer node = TestNodes.start(TestNodes.config().withEngine(eo))) {
            JsonNode m = Http.json(new Http(node).get("/v1/capabilities")).get("models").get(0);
            assertThat(m.at("/state_layout/id").asText()).startsWith("llama-kv-k-q8_0.v-f16/");
            assertThat(m.at("/state_layout/cache_type_k").asText()).isEqualTo("q8_0");
            assertThat(m.at("/state_layout/cache_type_v").asText()).isEqualTo("f16");
            assertThat(m.at("/recipe/state_dtype").asText()).isEqualTo("k-q8_0.v-f16");
            assertThat(m.at("/recipe/id").asText()).isNotEqualTo(recipeOfTheTestModel());
            // K q8_0 (2 layers x 4 blocks x 34 bytes) + V f16 (2 layers x 128 x 2).
            assertThat(m.at("/state_layout/bytes_per_token").asLong()).isEqualTo(272 + 512);
            var sched = node.models().find("llama-tiny").orElseThrow().scheduler();
            assertThat(sched.engine().stateLayout().bytesForTokens(100)).isEqualTo(100L * (272 + 512));
        }
    }

    @Test
    void aRecommendationMeasuredOnAnotherEngineVersionIsIgnored(@TempDir Path dir) throws IOException {
        Path sat = dir.resolve("saturation.json");
        String old = entry(ArtifactHash.sha256(TestNodes.modelPath()), recipeOfTheTestModel(), 3)
                .replace("{", "{\"engine\":\"" + servedEngine() + "/" + (dgr.engine.EngineId.VERSION - 1) + "\",");
        Files.writeString(sat, saturationJson(old));
        try (NodeServer node = TestNodes.start(TestNodes.config().withSaturationFile(sat))) {
            JsonNode c = Http.json(new Http(node).get("/v1/capabilities"));
            assertThat(c.at("/saturation/status").asText()).isEqualTo("ignored");
            assertThat(c.at("/saturation/ignored/0/reason").asText()).contains("measured on engine " + servedEngine() + "/" + (dgr.engine.EngineId.VERSION - 1));
            assertThat(c.at("/models/0/concurrency_limit/source").asText()).isEqualTo("default");
        }
    }

    @Test
    void anOperatorFlagWinsOverTheRecommendationAndSaysSo(@TempDir Path dir) throws IOException {
        Path sat = dir.resolve("saturation.json");
        Files.writeString(sat, saturationJson(entry(ArtifactHash.sha256(TestNodes.modelPath()), recipeOfTheTestModel(), 3)));
        try (NodeServer node = TestNodes.start(TestNodes.config().withSaturationFile(sat).withMaxBatchSessions(5))) {
            JsonNode m = Http.json(new Http(node).get("/v1/capabilities")).get("models").get(0);
            assertThat(m.get("max_batch_rows").asInt()).isEqualTo(5);
            assertThat(m.at("/concurrency_limit/source").asText()).isEqualTo("operator");
            assertThat(m.at("/concurrency_limit/detail").asText()).contains("overrides");
        }
    }

    @Test
    void aFileMeasuredOnAnotherArtifactIsIgnoredAndTheDefaultCapStays(@TempDir Path dir) throws IOException {
        Path sat = dir.resolve("s.json");
        Files.writeString(sat, saturationJson(entry("ab".repeat(32), recipeOfTheTestModel(), 2)));
        try (NodeServer node = TestNodes.start(TestNodes.config().withSaturationFile(sat))) {
            JsonNode c = Http.json(new Http(node).get("/v1/capabilities"));
            assertThat(c.at("/saturation/status").asText()).isEqualTo("ignored");
            assertThat(c.at("/saturation/reason").asText()).contains("no recommendation matches");
            assertThat(c.at("/saturation/ignored/0/reason").asText()).contains("ab".repeat(32));
            assertThat(c.at("/saturation/recommendations")).isEmpty();
            assertThat(c.at("/models/0/max_batch_rows").asInt()).isEqualTo(16);
            assertThat(c.at("/models/0/concurrency_limit/source").asText()).isEqualTo("default");
        }
    }

    @Test
    void noSaturationFileIsReportedAbsentAndBadFilesIgnored(@TempDir Path dir) throws IOException {
        var served = List.of(new Saturation.Served("m", "x", "r"));
        assertThat(Saturation.load(null, served).report().get("status").asText()).isEqualTo("absent");
        assertThat(Saturation.load(dir.resolve("missing.json"), served).report().get("status").asText()).isEqualTo("absent");
        Path bad = dir.resolve("bad.json");
        Files.writeString(bad, "{\"artifact_sha256\": ");
        assertThat(Saturation.load(bad, served).report().get("status").asText()).isEqualTo("ignored");
        Path future = dir.resolve("v2.json");
        Files.writeString(future, saturationJson(entry("x", "r", 2)).replace("\"schema_version\":1", "\"schema_version\":2"));
        var f = Saturation.load(future, served);
        assertThat(f.report().get("reason").asText()).contains("schema_version");
        assertThat(f.byModel()).isEmpty();
    }

    /** The engine a default node runs here: java-q8 where its native kernel runs, else java-simd. */
    private static String servedEngine() {
        return dgr.engine.EngineOptions.Kind.preferred() == dgr.engine.EngineOptions.Kind.Q8 ? "java-q8" : "java-simd";
    }

    private static String recipeOfTheTestModel() {
        try (var e = dgr.engine.Engines.load(TestNodes.modelPath(), dgr.engine.EngineOptions.defaults().withThreads(1))) {
            return e.recipe().id();
        }
    }
}
