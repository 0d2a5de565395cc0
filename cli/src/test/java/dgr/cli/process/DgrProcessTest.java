package dgr.cli.process;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DgrProcessTest {
    @TempDir Path dir;

    @Test
    void aStartedProcessWritesItsOutputToItsLog() {
        try (DgrProcess p = DgrProcess.start("help", dir, List.of("--help"))) {
            p.awaitLog("Usage: dgr", Duration.ofSeconds(60));
            assertThat(p.log()).contains("serve");
        }
    }

    @Test
    void waitingForAProcessThatExitsFailsWithItsOutputInsteadOfHanging() {
        try (DgrProcess p = DgrProcess.start("bad-flag", dir, List.of("inspect", "--no-such-flag"))) {
            assertThatThrownBy(() -> p.awaitHealthy("http://127.0.0.1:" + DgrProcess.freePort(), Duration.ofSeconds(60)))
                    .hasMessageContaining("exited with");
        }
    }
}
