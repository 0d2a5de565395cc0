package dgr.node;

import dgr.engine.EngineOptions;
import dgr.runtime.SchedulerConfig;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.List;

/** Starts real nodes on 127.0.0.1 (ephemeral port) over the llama-tiny test model. */
final class TestNodes {
    static final String MODEL = "llama-tiny";

    private TestNodes() {}

    static Path modelPath() {
        try {
            return Path.of(TestNodes.class.getResource("/llama-tiny-Q4_0.gguf").toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Loopback, port 0, the tiny model under the id {@value #MODEL}, 2 engine threads. */
    static NodeConfig config() {
        return NodeConfig.of(List.of(new ModelSpec(modelPath(), MODEL)))
                .withAddress("127.0.0.1", 0)
                .withEngine(EngineOptions.defaults().withThreads(2))
                .withScheduler(SchedulerConfig.defaults().withBatch(16, 64));
    }

    static NodeServer start(NodeConfig config) {
        try {
            return NodeServer.start(config);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
