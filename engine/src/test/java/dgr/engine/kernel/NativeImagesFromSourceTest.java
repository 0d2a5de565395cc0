package dgr.engine.kernel;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The native images are the source: where the toolchain pinned in
 * {@code tools/native-kernels/TOOLCHAIN} is installed, {@code build.sh} compiles {@code q8.c} and {@code attn.c} into a
 * scratch folder and every committed image must equal the build byte for byte. Elsewhere (another
 * compiler, or none) it is skipped and says which toolchain it found.
 */
class NativeImagesFromSourceTest {
    private static final Path ROOT = Path.of(System.getProperty("dgr.repo.root", ".."));
    private static final Path TOOLS = ROOT.resolve("tools/native-kernels");
    private static final Path IMAGES = ROOT.resolve("engine/src/main/resources/dgr/engine/kernel");

    @Test
    void buildShReproducesTheCommittedImagesFromTheirSource(@TempDir Path out) throws Exception {
        List<String> pinned = Files.readAllLines(TOOLS.resolve("TOOLCHAIN")).stream().filter(l -> !l.isBlank()).toList();
        String gcc = firstLine("gcc", "--version"), ld = firstLine("ld", "--version");
        assumeTrue(List.of(gcc, ld).equals(pinned), "toolchain here is [" + gcc + "; " + ld + "], images are pinned to " + pinned);
        assumeTrue(!firstLine("objcopy", "--version").isEmpty() && !firstLine("objdump", "--version").isEmpty(),
                "binutils' objcopy and objdump are missing");
        Path log = out.resolve("build.log");
        ProcessBuilder pb = new ProcessBuilder("sh", TOOLS.resolve("build.sh").toString()).redirectErrorStream(true)
                .redirectOutput(log.toFile());
        pb.environment().put("DGR_Q8_OUT", out.toString());
        Process p = pb.start();
        try {
            // About 35 s of one core (gcc -O2 twice); the bound is for a hung compiler, not a slow one.
            assertThat(p.waitFor(10, TimeUnit.MINUTES)).as("build.sh finished").isTrue();
            assertThat(p.exitValue()).as("build.sh: " + Files.readString(log)).isZero();
        } finally {
            // build.sh's children (gcc, ld) too, should the wait give up while they run
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
        }
        for (String image : List.of("q8-avx512vnni.bin", "q8-avx2.bin", "attn-avx512.bin", "attn-avx2.bin")) {
            assertThat(Files.readAllBytes(out.resolve(image))).as(image + " built from its source against the committed one")
                    .isEqualTo(Files.readAllBytes(IMAGES.resolve(image)));
        }
    }

    /** The first line {@code command} prints, or "" where it cannot run. */
    private static String firstLine(String... command) throws InterruptedException {
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            try {
                String text = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                return p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0 ? text.lines().findFirst().orElse("").strip() : "";
            } finally {
                p.destroyForcibly();
            }
        } catch (IOException e) {
            return "";
        }
    }
}
