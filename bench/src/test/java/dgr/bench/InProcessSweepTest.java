package dgr.bench;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.networknt.schema.JsonSchema;
import com.networknt.schema.JsonSchemaFactory;
import com.networknt.schema.SpecVersion;
import com.networknt.schema.ValidationMessage;
import dgr.bench.metrics.LevelMetrics;
import dgr.bench.metrics.Summary;
import dgr.bench.target.RequestRecord;
import dgr.engine.EngineOptions;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A short in-process sweep on llama-tiny: every output written, and the numbers agree with each other. */
class InProcessSweepTest {
    @TempDir
    static Path dir;
    static Bench.Outcome outcome;
    static Path out;

    @BeforeAll
    static void sweep() throws Exception {
        Path model = TinyModel.write(dir);
        out = dir.resolve("out");
        BenchConfig cfg = BenchConfig.builder().model(model).concurrency(List.of(1, 2, 4)).requestsPerLevel(8)
                .promptTokens(IntRange.parse("8:24")).maxTokens(IntRange.parse("4:12")).warmup(2).probe(true)
                .engine(EngineOptions.defaults().withThreads(1)).duration(java.time.Duration.ofSeconds(15)).out(out).commandLine("test sweep").build();
        outcome = new Bench(cfg, null).run();
    }

    @Test
    void writesAllFourOutputsAndPlots() {
        for (String f : List.of("bench-result.json", "saturation.json", "report.md", "report.html", "throughput.png",
                "latency-p95.png", "ttft-cdf.png", "itl-cdf.png", "occupancy.png")) {
            assertThat(out.resolve(f)).isNotEmptyFile();
        }
        var failed = outcome.result().runs().getFirst().levels().stream()
                .flatMap(l -> l.fairness().checks().stream().filter(c -> c.failed()).map(c -> l.label() + ": " + c))
                .toList();
        assertThat(failed).isEmpty();
        assertThat(outcome.exitCode()).isZero();
        // The report says what the kernels' memory access had: it moves speed by a third on some machines.
        assertThat(outcome.result().environment().kernelMemory()).contains("activation").contains("software prefetch");
    }

    @Test
    void tokensCountedEqualTokensGeneratedAndIterationRowsMatchAccounting() {
        for (LevelMetrics m : outcome.result().runs().getFirst().levels()) {
            var c = m.consistency();
            assertThat(c.tokensCounted()).as(m.label()).isEqualTo(c.tokensGenerated()).isPositive();
            assertThat(c.rowsInIterations()).as(m.label() + " " + c).isEqualTo(c.rowsAccounted());
            assertThat(c.consistent()).isTrue();
            assertThat(m.completed()).isEqualTo(8);
            assertThat(m.failed()).isZero();
        }
        for (RequestRecord r : outcome.result().runs().getFirst().requests()) {
            assertThat(r.error()).as("request %d", r.id()).isNull();
            assertThat(r.countedTokens()).isEqualTo(r.outputTokens());
        }
    }

    @Test
    void percentilesAreOrderedAndOccupancyAtMostOne() {
        for (LevelMetrics m : outcome.result().runs().getFirst().levels()) {
            for (Summary s : new Summary[] {m.ttftMs(), m.tpotMs(), m.itlMs(), m.e2elMs(), m.queueTimeMs()}) {
                assertThat(s).isNotNull();
                assertThat(s.min()).isLessThanOrEqualTo(s.p50());
                assertThat(s.p50()).isLessThanOrEqualTo(s.p95());
                assertThat(s.p95()).isLessThanOrEqualTo(s.p99());
                assertThat(s.p99()).isLessThanOrEqualTo(s.max());
            }
            assertThat(m.batch().occupancy()).isPositive().isLessThanOrEqualTo(1.0);
            assertThat(m.batch().prefillRowShare() + m.batch().decodeRowShare()).isCloseTo(1.0, org.assertj.core.data.Offset.offset(1e-9));
            assertThat(m.outputThroughput()).isCloseTo(m.totalOutputTokens() / m.durationS(), org.assertj.core.data.Offset.offset(1e-6));
            assertThat(m.memory().heapAfterGcBytes()).isPositive();
            assertThat(m.memory().processRssBytes()).isPositive();
            assertThat(m.probe()).isNotNull();
        }
    }

    @Test
    void saturationJsonValidatesAgainstTheCheckedInSchema() throws Exception {
        ObjectMapper json = new ObjectMapper();
        JsonSchema schema = JsonSchemaFactory.getInstance(SpecVersion.VersionFlag.V202012)
                .getSchema(Files.readString(TinyModel.schema()));
        JsonNode sat = json.readTree(out.resolve("saturation.json").toFile());
        Set<ValidationMessage> errors = schema.validate(sat);
        assertThat(errors).isEmpty();
        JsonNode rec = sat.get("recommendations").get(0);
        assertThat(rec.get("lane").asText()).isEqualTo("dense");
        assertThat(rec.get("concurrency_tested").toString()).isEqualTo("[1,2,4]");
        // Three points are too few for the two-segment rule: it must say so, not invent a knee.
        assertThat(rec.get("knee_status").asText()).isEqualTo("no_knee");
        assertThat(rec.get("recommended_max_concurrency").asInt()).isBetween(1, 4);
        assertThat(rec.get("artifact_sha256").asText()).hasSize(64);
        assertThat(sat.get("lanes_not_measured").get(0).get("lane").asText()).isEqualTo("v4");
    }

    @Test
    void brokenSaturationJsonFailsTheSchema() throws Exception {
        ObjectMapper json = new ObjectMapper();
        JsonSchema schema = JsonSchemaFactory.getInstance(SpecVersion.VersionFlag.V202012)
                .getSchema(Files.readString(TinyModel.schema()));
        var sat = (com.fasterxml.jackson.databind.node.ObjectNode) json.readTree(out.resolve("saturation.json").toFile());
        ((com.fasterxml.jackson.databind.node.ObjectNode) sat.get("recommendations").get(0)).put("knee_status", "maybe");
        assertThat(schema.validate(sat)).isNotEmpty();
    }
}
