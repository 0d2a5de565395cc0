package dgr.engine.fuzz;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Seeded in-process fuzzing of GGUF files: every mutated header, metadata value, tensor-table entry
 * and truncation is either refused with a precise message or loads and runs; none crashes or hangs.
 *
 * <p>CI runs {@code dgr.fuzz.cases} = 10,000 cases (a few seconds). The long run (docs/gguf.md):
 * <pre>
 * mvn -B -q -pl engine -am verify -Dtest=GgufFuzzTest -Dsurefire.failIfNoSpecifiedTests=false \
 *     -Ddgr.fuzz.cases=1000000 -Ddgr.fuzz.seed=1 -Ddgr.fuzz.loadEvery=200
 * </pre>
 * It prints its outcome counts; a crash or hang names the seed, case and mutations that reproduce it.
 */
class GgufFuzzTest {
    @Test
    void everyMutatedFileIsRefusedCleanlyOrLoadsAndRunsNeverCrashesOrHangs(@TempDir Path dir) throws Exception {
        long cases = Long.getLong("dgr.fuzz.cases", 10_000);
        long seed = Long.getLong("dgr.fuzz.seed", 20261201);
        int loadEvery = Integer.getInteger("dgr.fuzz.loadEvery", 100);
        GgufFuzz fuzz = new GgufFuzz(List.of(resource("llama-tiny-Q4_0.gguf"), resource("llama-tiny-Q8_0.gguf"),
                resource("dsv4-tiny.gguf")), dir, 30_000);
        GgufFuzz.Report report = fuzz.run(seed, cases, loadEvery, 20);
        System.out.println("GGUF fuzz, seed " + seed + ": " + report);
        report.findings().forEach(f -> System.out.println("  " + f));
        assertThat(report.findings()).isEmpty();
        assertThat(report.count(GgufFuzz.Outcome.REFUSED)).as("the mutations reach the checks").isGreaterThan(cases / 4);
        assertThat(report.loaded()).as("accepted files are really loaded and run").isPositive();
    }

    private static Path resource(String name) throws URISyntaxException {
        return Path.of(GgufFuzzTest.class.getResource("/conformance/models/" + name).toURI());
    }
}
