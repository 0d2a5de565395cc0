package dgr.node;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dgr.engine.ArtifactHash;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The capability report: engines, recipes, layouts, schemas, budget, saturation with provenance, load. */
class CapabilitiesTest {
    static String saturationJson(String sha) {
        return "{\"schema_version\":1,\"recommendations\":[{\"recipe_id\":\"r1\",\"lane\":\"dense\",\"artifact_sha256\":\""
                + sha + "\",\"knee_concurrency\":4,\"knee_status\":\"knee\",\"recommended_max_concurrency\":3}]}";
    }

    @Test
    void reportsEnginesRecipesLayoutsSchemasAndTheMatchingSaturationFile(@TempDir Path dir) throws IOException {
        String sha = ArtifactHash.sha256(TestNodes.modelPath());
        Path sat = dir.resolve("saturation.json");
        Files.writeString(sat, saturationJson(sha));
        try (NodeServer node = TestNodes.start(TestNodes.config().withSaturationFile(sat).withNodeId("node-a"))) {
            var r = new Http(node).get("/v1/capabilities");
            assertThat(r.statusCode()).isEqualTo(200);
            JsonNode c = Http.json(r);
            assertThat(c.get("node_id").asText()).isEqualTo("node-a");
            JsonNode m = c.get("models").get(0);
            assertThat(m.get("id").asText()).isEqualTo("llama-tiny");
            assertThat(m.at("/engine/id").asText()).isEqualTo("java-simd/1");
            assertThat(m.at("/engine/features/max_rows").asInt()).isPositive();
            assertThat(m.at("/recipe/id").asText()).isEqualTo(node.models().find("llama-tiny").orElseThrow().engine().recipe().id());
            assertThat(m.at("/recipe/layer_span/0").asInt()).isZero();
            assertThat(m.at("/recipe/layer_span/1").asInt()).isEqualTo(2);
            assertThat(m.at("/recipe/artifact_sha256").asText()).isEqualTo(sha);
            assertThat(m.at("/state_layout/id").asText()).isNotBlank();
            assertThat(m.at("/state_layout/bytes_per_token").asLong()).isPositive();
            assertThat(m.at("/boundary_schema/row_width").asInt()).isEqualTo(256);
            assertThat(c.at("/memory/state_budget_bytes").asLong()).isPositive();
            assertThat(c.at("/load/running").asInt()).isZero();
            assertThat(c.at("/saturation/status").asText()).isEqualTo("loaded");
            assertThat(c.at("/saturation/provenance/path").asText()).isEqualTo(sat.toAbsolutePath().toString());
            // Verbatim: the document is the file's JSON, nothing added or dropped.
            assertThat(c.at("/saturation/document")).isEqualTo(Http.JSON.readTree(saturationJson(sha)));
        }
    }

    @Test
    void aSaturationFileForAnotherArtifactIsIgnoredWithTheReason(@TempDir Path dir) throws IOException {
        Path sat = dir.resolve("s.json");
        Files.writeString(sat, saturationJson("ab".repeat(32)));
        ObjectNode r = Saturation.report(sat, Set.of("cd".repeat(32)));
        assertThat(r.get("status").asText()).isEqualTo("ignored");
        assertThat(r.get("reason").asText()).contains("ab".repeat(32));
        assertThat(r.has("document")).isFalse();
    }

    @Test
    void noSaturationFileIsReportedAbsentAndBadJsonIgnored(@TempDir Path dir) throws IOException {
        assertThat(Saturation.report(null, Set.of("x")).get("status").asText()).isEqualTo("absent");
        assertThat(Saturation.report(dir.resolve("missing.json"), Set.of("x")).get("status").asText()).isEqualTo("absent");
        Path bad = dir.resolve("bad.json");
        Files.writeString(bad, "{\"artifact_sha256\": ");
        assertThat(Saturation.report(bad, Set.of("x")).get("status").asText()).isEqualTo("ignored");
    }
}
