package dgr.engine.kernel;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link Q8RowsTest}, {@code NativeAttentionTest} and {@code NativeRowLanesTest} hold only the images this CPU runs to
 * the Java kernels; this holds the others' code to them. {@code tools/native-kernels/emu/check.sh} builds {@code q8.c}'s
 * AVX-512 VNNI and AMX code and {@code attn.c}'s AVX-512 code for this CPU (SIMDe for the AVX-512 intrinsics,
 * {@code emu.h} for AMX's and the few SIMDe lacks) beside their AVX2 code as the images are built, and fails at the
 * first output of any type, batch size, row range or attention operation where they differ. So on an AVX2-only
 * machine a change to the code an Intel CPU runs is checked too. Skipped where the CPU lacks AVX2 or SIMDe's headers ({@code libsimde-dev}) or
 * gcc are missing, and says which.
 */
class EmulatedKernelsAgreeTest {
    private static final Path ROOT = Path.of(System.getProperty("dgr.repo.root", ".."));
    private static final Path CHECK = ROOT.resolve("tools/native-kernels/emu/check.sh");

    @Test
    void avx512AndAmxCodeWritesTheBitsOfTheAvx2Code(@TempDir Path out) throws Exception {
        assumeTrue(CodePage.cpuFlags().containsAll(List.of("avx2", "fma", "f16c")), "this CPU cannot run the AVX2 code");
        assumeTrue(Files.exists(Path.of("/usr/include/simde/x86/avx512.h")), "SIMDe's headers are missing (apt-get install libsimde-dev)");
        assumeTrue(runs("gcc", "--version"), "gcc is missing");
        Path log = out.resolve("check.log");
        Process p = new ProcessBuilder("sh", CHECK.toString()).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        try {
            // About 2 minutes of one core; the bound is for a hung build, not a slow one.
            assertThat(p.waitFor(15, TimeUnit.MINUTES)).as("check.sh finished").isTrue();
            String text = Files.readString(log);
            assertThat(p.exitValue()).as("check.sh: " + text).isZero();
            assertThat(text).as("check.sh's summaries").contains("cases, no difference").contains("attention cases, no difference");
        } finally {
            // the script's children (gcc, the check) too, should the wait give up while they run
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
        }
    }

    private static boolean runs(String... command) throws InterruptedException {
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            try {
                p.getInputStream().readAllBytes();
                return p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0;
            } finally {
                p.destroyForcibly();
            }
        } catch (java.io.IOException e) {
            return false;
        }
    }
}
