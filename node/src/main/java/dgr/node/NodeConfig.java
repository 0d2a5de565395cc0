package dgr.node;

import dgr.engine.EngineOptions;
import dgr.runtime.SchedulerConfig;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * How to run a node.
 *
 * @param host           address to bind
 * @param port           port to bind; 0 picks a free one ({@link NodeServer#port()} tells which)
 * @param models         models to load (at least one)
 * @param apiKeys        accepted bearer keys, each its own tenant; with {@code keysFile}, none = open
 * @param keysFile       file of {@code key tenant} lines, or null
 * @param requestTimeout deadline of one generation from submission, or null for none
 * @param maxBodyBytes   largest request body accepted (larger: HTTP 413)
 * @param scheduler      knobs of each model's scheduler
 * @param engine         how engines are built (kind, threads); the row limit follows the scheduler's
 *                       {@code maxBatchTokens}
 * @param saturationFile the benchmark's {@code saturation.json}, or null to look for one beside the
 *                       first model
 * @param nodeId         id reported in the capability report, or null for {@code host:port}
 * @param maxBatchSessions the operator's explicit running-session cap for every model, or null: then a
 *                       model uses the loaded saturation recommendation for its artifact and recipe
 *                       when one exists, else {@code scheduler.maxBatchSessions()}
 * @param nodeToken      the node token a tracker presents to read this node's accounting ({@code POST
 *                       /v1/accounting}), or null
 * @param serving        sampling defaults, the max_tokens cap, chat template, CORS and TLS ({@link ServingOptions})
 */
public record NodeConfig(String host, int port, List<ModelSpec> models, List<String> apiKeys, Path keysFile,
                         Duration requestTimeout, long maxBodyBytes, SchedulerConfig scheduler, EngineOptions engine,
                         Path saturationFile, String nodeId, Integer maxBatchSessions, String nodeToken,
                         ServingOptions serving) {
    public static final long DEFAULT_MAX_BODY_BYTES = 4L << 20;

    public NodeConfig {
        models = List.copyOf(models);
        java.util.Objects.requireNonNull(serving, "serving");
        apiKeys = List.copyOf(apiKeys);
        if (models.isEmpty()) throw new IllegalArgumentException("at least one model is required");
        if (port < 0 || port > 65535) throw new IllegalArgumentException("port must be in [0, 65535], got " + port);
        if (maxBatchSessions != null && maxBatchSessions < 1) throw new IllegalArgumentException("maxBatchSessions must be >= 1");
        if (nodeToken != null && nodeToken.isBlank()) throw new IllegalArgumentException("--node-token must not be blank");
        if (maxBodyBytes < 1) throw new IllegalArgumentException("maxBodyBytes must be >= 1");
        if (requestTimeout != null && (requestTimeout.isNegative() || requestTimeout.isZero())) {
            throw new IllegalArgumentException("request timeout must be positive, got " + requestTimeout);
        }
    }

    /** Loopback on port 8080, no keys, no deadline, 4 MiB bodies, default scheduler and engine. */
    public static NodeConfig of(List<ModelSpec> models) {
        return new NodeConfig("127.0.0.1", 8080, models, List.of(), null, null, DEFAULT_MAX_BODY_BYTES,
                SchedulerConfig.defaults(), EngineOptions.defaults(), null, null, null, null, ServingOptions.defaults());
    }

    public NodeConfig withAddress(String h, int p) {
        return new NodeConfig(h, p, models, apiKeys, keysFile, requestTimeout, maxBodyBytes, scheduler, engine,
                saturationFile, nodeId, maxBatchSessions, nodeToken, serving);
    }

    public NodeConfig withKeys(List<String> keys, Path file) {
        return new NodeConfig(host, port, models, keys, file, requestTimeout, maxBodyBytes, scheduler, engine,
                saturationFile, nodeId, maxBatchSessions, nodeToken, serving);
    }

    public NodeConfig withRequestTimeout(Duration t) {
        return new NodeConfig(host, port, models, apiKeys, keysFile, t, maxBodyBytes, scheduler, engine,
                saturationFile, nodeId, maxBatchSessions, nodeToken, serving);
    }

    public NodeConfig withMaxBodyBytes(long n) {
        return new NodeConfig(host, port, models, apiKeys, keysFile, requestTimeout, n, scheduler, engine,
                saturationFile, nodeId, maxBatchSessions, nodeToken, serving);
    }

    public NodeConfig withScheduler(SchedulerConfig s) {
        return new NodeConfig(host, port, models, apiKeys, keysFile, requestTimeout, maxBodyBytes, s, engine,
                saturationFile, nodeId, maxBatchSessions, nodeToken, serving);
    }

    public NodeConfig withEngine(EngineOptions e) {
        return new NodeConfig(host, port, models, apiKeys, keysFile, requestTimeout, maxBodyBytes, scheduler, e,
                saturationFile, nodeId, maxBatchSessions, nodeToken, serving);
    }

    public NodeConfig withSaturationFile(Path p) {
        return new NodeConfig(host, port, models, apiKeys, keysFile, requestTimeout, maxBodyBytes, scheduler, engine,
                p, nodeId, maxBatchSessions, nodeToken, serving);
    }

    public NodeConfig withNodeId(String id) {
        return new NodeConfig(host, port, models, apiKeys, keysFile, requestTimeout, maxBodyBytes, scheduler, engine,
                saturationFile, id, maxBatchSessions, nodeToken, serving);
    }

    /** The operator's explicit running-session cap (wins over a saturation recommendation); null for none. */
    public NodeConfig withMaxBatchSessions(Integer rows) {
        return new NodeConfig(host, port, models, apiKeys, keysFile, requestTimeout, maxBodyBytes, scheduler, engine,
                saturationFile, nodeId, rows, nodeToken, serving);
    }

    /** The node token a tracker presents to this node (its accounting endpoint); null for none. */
    public NodeConfig withNodeToken(String token) {
        return new NodeConfig(host, port, models, apiKeys, keysFile, requestTimeout, maxBodyBytes, scheduler, engine,
                saturationFile, nodeId, maxBatchSessions, token, serving);
    }

    /** Sampling defaults, the max_tokens cap, chat template, CORS and TLS. */
    public NodeConfig withServing(ServingOptions s) {
        return new NodeConfig(host, port, models, apiKeys, keysFile, requestTimeout, maxBodyBytes, scheduler, engine,
                saturationFile, nodeId, maxBatchSessions, nodeToken, s);
    }
}
