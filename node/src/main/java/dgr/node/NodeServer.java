package dgr.node;

import dgr.node.http.NodeHttp;
import dgr.node.metrics.NodeMetrics;
import dgr.node.model.ModelRegistry;
import dgr.node.model.ServedModel;
import io.helidon.webserver.WebServer;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * A dgr node: the OpenAI-compatible HTTP API, {@code /metrics} and the capability report over one
 * scheduler per loaded model.
 *
 * <p>{@link #start} binds the port first and then loads the models, so {@code /health} answers 503
 * while loading and 200 once every model serves.
 */
public final class NodeServer implements AutoCloseable {
    public static final String VERSION = "0.1.0";
    private static final System.Logger LOG = System.getLogger(NodeServer.class.getName());

    private final NodeConfig config;
    private final ModelRegistry models = new ModelRegistry();
    private final NodeMetrics metrics = new NodeMetrics();
    private volatile CapabilityReport capabilities;
    private final WebServer web;

    private NodeServer(NodeConfig config, ApiKeys keys) {
        this.config = config;
        NodeHttp http = new NodeHttp(models, keys, metrics, () -> capabilities().build(), config.maxBodyBytes(),
                config.requestTimeout());
        this.web = WebServer.builder()
                .host(config.host())
                .port(config.port())
                .routing(r -> r.any(http::handle))
                .build();
    }

    /** Binds, loads every model, then reports ready. Throws (and releases everything) when a model fails. */
    public static NodeServer start(NodeConfig config) throws IOException {
        NodeServer s = new NodeServer(config, ApiKeys.of(config.apiKeys(), config.keysFile()));
        s.web.start();
        try {
            s.loadModels();
        } catch (RuntimeException | Error e) {
            // Never leave a listener up that answers "loading" for a node that will not load.
            s.close();
            throw e;
        }
        return s;
    }

    private void loadModels() {
        List<ServedModel> loaded = new ArrayList<>();
        try {
            for (ModelSpec spec : config.models()) {
                long t0 = System.nanoTime();
                ServedModel m = ServedModel.load(spec, config.engine(), config.scheduler(), metrics);
                loaded.add(m);
                LOG.log(System.Logger.Level.INFO, "loaded model " + m.id() + " (" + m.engine().id() + ", recipe "
                        + m.engine().recipe().id() + ") in " + (System.nanoTime() - t0) / 1_000_000 + " ms");
            }
            Set<String> artifacts = new LinkedHashSet<>();
            for (ServedModel m : loaded) artifacts.add(m.engine().recipe().artifactSha256());
            capabilities = new CapabilityReport(nodeId(), VERSION, models,
                    Saturation.report(saturationPath(), artifacts));
            models.publish(loaded);
        } catch (RuntimeException | Error e) {
            for (ServedModel m : loaded) m.close();
            throw e;
        }
    }

    /** The given file, else {@code saturation.json} beside the first model when there is one. */
    private Path saturationPath() {
        if (config.saturationFile() != null) return config.saturationFile();
        Path dir = config.models().getFirst().path().toAbsolutePath().getParent();
        Path beside = dir == null ? null : dir.resolve("saturation.json");
        return beside != null && java.nio.file.Files.isRegularFile(beside) ? beside : null;
    }

    private CapabilityReport capabilities() {
        CapabilityReport c = capabilities;
        return c != null ? c : new CapabilityReport(nodeId(), VERSION, models, absent());
    }

    private static com.fasterxml.jackson.databind.node.ObjectNode absent() {
        return com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.objectNode().put("status", "absent");
    }

    private String nodeId() {
        return config.nodeId() != null ? config.nodeId() : config.host() + ":" + port();
    }

    /** The bound port (the one picked when the config said 0). */
    public int port() { return web.port(); }

    public String host() { return config.host(); }

    public NodeMetrics metrics() { return metrics; }

    public ModelRegistry models() { return models; }

    @Override
    public void close() {
        // Stop taking requests first, then cancel sessions and free engines.
        web.stop();
        models.close();
    }
}
