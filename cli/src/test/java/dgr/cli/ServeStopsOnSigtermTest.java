package dgr.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dgr.cli.process.DgrProcess;
import dgr.gguf.synth.QuantMix;
import dgr.gguf.synth.Synth;
import dgr.gguf.synth.SynthPreset;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What an operator sees when a node is stopped the usual way (Ctrl-C, SIGTERM from a supervisor). */
class ServeStopsOnSigtermTest {
    @TempDir Path dir;

    @Test
    void aNodeStoppedBySigtermExitsQuietlyWithoutStartingItsListenerAgain() throws Exception {
        Path model = dir.resolve("llama-tiny.gguf");
        Synth.write(SynthPreset.LLAMA_TINY, QuantMix.parse("Q4_0"), 42, model);
        int port = DgrProcess.freePort();
        DgrProcess node = DgrProcess.start("node", dir, List.of("serve", "-m", model.toString(), "--port",
                Integer.toString(port), "--threads", "1"));
        try (node) {
            node.awaitHealthy("http://127.0.0.1:" + port, Duration.ofSeconds(120));
        } // close(): SIGTERM, and SIGKILL only if the node is still there 10 s later
        assertThat(node.isAlive()).isFalse();
        // Helidon's shutdown hook stops the listener before the node's own close runs; the listener
        // watch once took that for a dead listener and built a new server on the way out.
        assertThat(node.log()).doesNotContain("ListenerWatch").doesNotContain("\tat ");
    }
}
