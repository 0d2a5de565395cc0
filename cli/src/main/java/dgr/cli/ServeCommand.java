package dgr.cli;

import dgr.engine.EngineOptions;
import dgr.node.ModelSpec;
import dgr.node.NodeConfig;
import dgr.node.NodeServer;
import dgr.node.ServingOptions;
import dgr.node.http.ListenerLimits;
import dgr.runtime.SchedulerConfig;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code dgr serve}: an OpenAI-compatible node over one scheduler per model. */
@Command(name = "serve", mixinStandardHelpOptions = true,
        description = "Serve models over an OpenAI-compatible HTTP API (/v1/completions, /v1/chat/completions,"
                + " /v1/models, /v1/capabilities, /health, /metrics).")
public final class ServeCommand implements Callable<Integer> {

    @Option(names = {"-m", "--model"}, description = "GGUF model file; repeat to serve several (default: the built-in llama-tiny Q4_0)")
    List<Path> models = new ArrayList<>();

    @Option(names = {"-a", "--alias"}, description = "id clients use for the model at the same position (default: file name without .gguf)")
    List<String> aliases = new ArrayList<>();

    @Option(names = "--host", defaultValue = "127.0.0.1", description = "address to bind (default: ${DEFAULT-VALUE})")
    String host;

    @Option(names = "--port", defaultValue = "8080", description = "port to bind; 0 picks a free one (default: ${DEFAULT-VALUE})")
    int port;

    @Option(names = "--api-key", description = "accepted bearer key, its own tenant; repeatable (none with no --keys-file: open)")
    List<String> apiKeys = new ArrayList<>();

    @Option(names = "--keys-file", description = "file of 'key tenant' lines")
    Path keysFile;

    @Option(names = "--request-timeout", description = "deadline of one generation, e.g. 30s, 2m, 500ms (default: none)")
    String requestTimeout;

    @Option(names = "--saturation", description = "saturation.json from 'dgr bench' (default: saturation.json beside the first model, if any)")
    Path saturation;

    @Option(names = {"-t", "--threads"}, description = "threads per forward pass (default: all cores)")
    Integer threads;

    @Option(names = "--engine", defaultValue = "auto", description = EngineOptions.ENGINE_HELP)
    String engine;

    @Option(names = {"-c", "--ctx-size"}, description = "context length per session (default: the model's, capped at 4096)")
    Integer contextLength;

    @Mixin
    CacheTypeOptions cache = new CacheTypeOptions();

    @Option(names = {"-np", "--parallel", "--max-batch-rows"}, paramLabel = "N",
            description = "most sessions running at once (each one row of every decode batch), for every model"
            + " (default: each model's recommended_max_concurrency from the loaded saturation.json, else the scheduler's 16)")
    Integer maxBatchSessions;

    @Option(names = {"-b", "--batch-tokens"}, paramLabel = "N",
            description = "most token positions in one forward pass: the prefill token budget, at least --parallel (default: 64)")
    Integer batchTokens;

    @Mixin
    SamplingOptions sampling;

    @Option(names = {"-n", "--n-predict"}, paramLabel = "N", defaultValue = "" + ServingOptions.DEFAULT_MAX_TOKENS,
            description = "most tokens one request generates, and the default when it names none (completions keep"
            + " OpenAI's 16) (default: ${DEFAULT-VALUE})")
    int maxTokensCap;

    @Option(names = "--chat-template", paramLabel = "NAME|JINJA",
            description = "chat template for every model instead of its own: a built-in name (chatml) or Jinja text")
    String chatTemplate;

    @Option(names = "--chat-template-file", paramLabel = "FILE", description = "chat template for every model, read from a Jinja file")
    Path chatTemplateFile;

    @Option(names = "--allowed-origins", split = ",", paramLabel = "ORIGIN",
            description = "browser origins allowed to call the API (CORS), comma separated; * = any (default: none)")
    List<String> allowedOrigins = new ArrayList<>();

    @Option(names = "--ssl-key-file", paramLabel = "FILE", description = "PEM private key: serve HTTPS (with --ssl-cert-file)")
    Path sslKeyFile;

    @Option(names = "--ssl-cert-file", paramLabel = "FILE", description = "PEM certificate chain for --ssl-key-file")
    Path sslCertFile;

    @Option(names = "--max-waiting", description = "most sessions waiting for admission; beyond it HTTP 429 (default: the scheduler's)")
    Integer maxWaiting;

    @Option(names = "--max-body-bytes", description = "largest request body (default: 4 MiB)")
    Long maxBodyBytes;

    @Option(names = "--tracker", description = "join the tracker at this URL (e.g. http://HOST:8000); needs --node-token")
    java.net.URI tracker;

    @Option(names = "--node-token", description = "the cluster's node token: presented to join a tracker (--tracker);"
            + " requests carrying it are the tracker's (tenant, request id, resumed sessions, POST /v1/accounting)")
    String nodeToken;

    @Option(names = "--max-connections", description = "most open client connections; beyond it new ones are answered"
            + " 503 and closed (default: " + ListenerLimits.DEFAULT_MAX_CONNECTIONS + ", lowered to fit the file-descriptor limit)")
    Integer maxConnections;

    @Option(names = "--idle-timeout", description = "close a connection idle this long, e.g. 30s (default: 30s)")
    String idleTimeout;

    @Option(names = "--header-timeout", description = "a request's line and headers must arrive within this from its"
            + " first byte, and its body within this once read, e.g. 10s (default: 10s)")
    String headerTimeout;

    @picocli.CommandLine.Mixin
    StageOptions stage = new StageOptions();

    @picocli.CommandLine.Mixin
    AccountingOptions accounting = new AccountingOptions();

    /** The listener's connection cap and timeouts from the flags. */
    ListenerLimits listenerLimits() {
        ListenerLimits l = ListenerLimits.defaults();
        if (maxConnections != null) l = l.withMaxConnections(maxConnections);
        if (idleTimeout != null) l = l.withIdleTimeout(DurationFlag.parse("--idle-timeout", idleTimeout));
        if (headerTimeout != null) l = l.withHeaderTimeout(DurationFlag.parse("--header-timeout", headerTimeout));
        return l;
    }

    @Override
    public Integer call() throws Exception {
        if (tracker != null && nodeToken == null) {
            throw new IllegalArgumentException("--tracker needs --node-token: the tracker refuses a node without its token");
        }
        NodeConfig config = config();
        StageOptions.requireDialable(stage.plan(), host, tracker != null);
        NodeServer node = NodeServer.start(config, listenerLimits(), stage.plan(),
                accounting.open(nodeToken, config.port(), System.err));
        if (tracker != null) node.joinTracker(tracker);
        System.err.println("dgr serve: listening on " + (config.serving().tls() ? "https" : "http") + "://" + node.host()
                + ":" + node.port() + " serving "
                + node.models().all().stream().map(m -> m.id()).toList() + StageOptions.describe(node));
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            node.close();
            stopped.countDown();
        }, "dgr-serve-shutdown"));
        stopped.await();
        return 0;
    }

    NodeConfig config() {
        List<Path> paths = models.isEmpty() ? List.of(DefaultModel.path()) : models;
        if (aliases.size() > paths.size()) {
            throw new IllegalArgumentException("--alias given " + aliases.size() + " times for " + paths.size() + " models");
        }
        List<ModelSpec> specs = new ArrayList<>();
        for (int i = 0; i < paths.size(); i++) specs.add(new ModelSpec(paths.get(i), i < aliases.size() ? aliases.get(i) : null));
        EngineOptions eo = cache.apply(EngineOptions.defaults().withKind(EngineOptions.Kind.ofFlag(engine)));
        if (threads != null) {
            if (threads < 1) throw new IllegalArgumentException("--threads must be at least 1");
            eo = eo.withThreads(threads);
        }
        if (contextLength != null) eo = eo.withContextLength(contextLength);
        eo = stage.span(eo, stage.plan(), paths.size());
        SchedulerConfig sc = SchedulerConfig.defaults();
        if (maxWaiting != null) sc = sc.withMaxWaitingSessions(maxWaiting);
        if (batchTokens != null) sc = OperatorOptions.batchTokens(sc, batchTokens, maxBatchSessions);
        NodeConfig c = NodeConfig.of(specs).withAddress(host, stage.httpPort(stage.plan(), port)).withKeys(apiKeys, keysFile).withEngine(eo)
                .withScheduler(sc).withSaturationFile(saturation).withMaxBatchSessions(maxBatchSessions);
        if (requestTimeout != null) c = c.withRequestTimeout(DurationFlag.parse("--request-timeout", requestTimeout));
        if (maxBodyBytes != null) c = c.withMaxBodyBytes(maxBodyBytes);
        if (nodeToken != null) c = c.withNodeToken(nodeToken);
        return c.withServing(new ServingOptions(sampling.config(), maxTokensCap,
                OperatorOptions.chatTemplate(chatTemplate, chatTemplateFile), allowedOrigins, sslKeyFile, sslCertFile));
    }
}
