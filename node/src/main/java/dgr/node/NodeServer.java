package dgr.node;

import dgr.engine.Engine;
import dgr.node.accounting.RecentRequests;
import dgr.node.http.ClientFaultLog;
import dgr.node.http.ConnectionGuard;
import dgr.node.http.ListenerLimits;
import dgr.node.http.ListenerStats;
import dgr.node.http.ListenerWatch;
import dgr.node.http.NodeHttp;
import dgr.node.http.NodeTls;
import dgr.node.metrics.NodeMetrics;
import dgr.node.model.ConcurrencyLimit;
import dgr.node.model.ModelRegistry;
import dgr.node.model.ServedModel;
import dgr.node.tracker.TrackerLink;
import dgr.node.tracker.TrackerTrust;
import dgr.runtime.SchedulerConfig;
import io.helidon.webserver.WebServer;
import java.io.IOException;
import java.net.URI;
import java.time.Clock;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

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
    /** Builds the HTTP server for a port: once at start, again when {@link ListenerWatch} restarts it. */
    private final java.util.function.IntFunction<WebServer> webServer;
    private volatile ListenerWatch listener;
    private final NodeHttp http;
    private volatile TrackerLink trackerLink;
    /** A head's alternates from the tracker it joined (docs/stages.md), or null. */
    private volatile dgr.node.stage.TrackerAlternates trackerAlternates;
    private final ConnectionGuard guard;
    /** This node's place in a route (docs/stages.md), or null for whole models. */
    private final dgr.node.stage.StagePlan stagePlan;
    private final dgr.node.stage.StageRole stage = new dgr.node.stage.StageRole();

    /** The accounting of the tracker's requests (in a journal on the disk when started with one). */
    private final RecentRequests recent;

    private NodeServer(NodeConfig config, ApiKeys keys, ListenerLimits limits, dgr.node.stage.StagePlan stagePlan,
                       RecentRequests recent) {
        this.config = config;
        this.recent = recent;
        this.stagePlan = stagePlan;
        ClientFaultLog faults = new ClientFaultLog(java.time.Duration.ofSeconds(1));
        this.guard = new ConnectionGuard(limits, faults);
        this.http = new NodeHttp(models, keys, metrics, () -> stage.addTo(capabilities().build()), config.maxBodyBytes(),
                config.requestTimeout(), recent,
                config.nodeToken(), config.serving()).guardedBy(guard, faults);
        if (config.nodeToken() != null) http.trustTracker(TrackerTrust.of(config.nodeToken()));
        this.webServer = port -> {
            var web = guard.configure(WebServer.builder())
                    .host(config.host())
                    .port(port)
                    .routing(r -> r.any(http::handle));
            if (config.serving().tls()) web.tls(NodeTls.of(config.serving()));
            return web.build();
        };
        ListenerStats.register(metrics.registry(), guard, () -> listener == null ? 0 : listener.restarts());
    }

    /** As {@link #start(NodeConfig)}, with the listener's connection cap and timeouts given. */
    public static NodeServer start(NodeConfig config, ListenerLimits limits) throws IOException {
        return start(config, limits, null);
    }

    /** As above, for a node that serves one span of a route ({@code stagePlan}), or whole models when it is null. */
    public static NodeServer start(NodeConfig config, ListenerLimits limits, dgr.node.stage.StagePlan stagePlan) throws IOException {
        return start(config, limits, stagePlan, new RecentRequests(RecentRequests.DEFAULT_CAPACITY, Clock.systemUTC()));
    }

    /**
     * As above, keeping the accounting of the tracker's requests in {@code recent}: {@link RecentRequests#durable}
     * for a node whose accounting must outlive a kill -9 (dgr serve --accounting-file). Closed with the node.
     */
    public static NodeServer start(NodeConfig config, ListenerLimits limits, dgr.node.stage.StagePlan stagePlan,
                                   RecentRequests recent) throws IOException {
        NodeServer s = new NodeServer(config, ApiKeys.of(config.apiKeys(), config.keysFile()), limits, stagePlan, recent);
        try {
            s.listener = ListenerWatch.start(config.host(), config.port(), s.webServer);
        } catch (RuntimeException e) {
            s.close();
            throw e;
        }
        LOG.log(System.Logger.Level.INFO, "at most " + s.guard.maxConnections() + " open connections (more are answered 503)"
                + (s.guard.maxConnections() < limits.maxConnections() ? " (lowered from " + limits.maxConnections()
                + " to fit the process's file-descriptor limit)" : "") + ", idle timeout " + limits.idleTimeout()
                + ", header timeout " + limits.headerTimeout());
        try {
            s.loadModels();
        } catch (RuntimeException | Error e) {
            // Never leave a listener up that answers "loading" for a node that will not load.
            s.close();
            throw e;
        }
        return s;
    }

    /** Binds, loads every model, then reports ready. Throws (and releases everything) when a model fails. */
    public static NodeServer start(NodeConfig config) throws IOException {
        return start(config, ListenerLimits.defaults());
    }

    /**
     * Loads every engine first (a recommendation is matched by recipe id, which the engine computes),
     * reads the saturation file against them, then starts one scheduler per model with the
     * running-session cap in force: the operator's flag, else the model's recommendation, else the
     * configured scheduler's value.
     */
    private void loadModels() {
        List<Engine> engines = new ArrayList<>();
        List<ServedModel> started = new ArrayList<>();
        SchedulerConfig base = baseScheduler();
        try {
            List<Saturation.Served> served = new ArrayList<>();
            for (ModelSpec spec : config.models()) {
                long t0 = System.nanoTime();
                Engine e = ServedModel.loadEngine(spec, config.engine(), base);
                engines.add(e);
                served.add(new Saturation.Served(spec.id(), e.recipe().artifactSha256(), e.recipe().id(), e.id().toString()));
                LOG.log(System.Logger.Level.INFO, "loaded model " + spec.id() + " (" + e.id() + ", recipe "
                        + e.recipe().id() + ") in " + (System.nanoTime() - t0) / 1_000_000 + " ms");
            }
            if (stagePlan != null && !stagePlan.isHead()) {
                // A later stage serves no model over HTTP: its span answers on the stage port.
                stage.startStage(engines, config, stagePlan, metrics.registry());
                capabilities = new CapabilityReport(nodeId(), VERSION, models, absent());
                models.publish(List.of());
                return;
            }
            Saturation.Loaded saturation = Saturation.load(saturationPath(), served);
            for (int i = 0; i < engines.size(); i++) {
                ModelSpec spec = config.models().get(i);
                Engine e = engines.get(i);
                ConcurrencyLimit limit = limitFor(spec, e, base, saturation);
                engines.set(i, null); // owned by the model from here, closed by it on failure
                ServedModel m = ServedModel.start(spec, e, base, limit, metrics, config.serving(),
                        stage.head(e, stagePlan, metrics.registry()));
                started.add(m);
                LOG.log(System.Logger.Level.INFO, "model " + spec.id() + ": at most " + limit.maxRunningSessions()
                        + " running sessions (" + limit.sourceName() + ": " + limit.detail() + ")");
            }
            capabilities = new CapabilityReport(nodeId(), VERSION, models, saturation.report());
            models.publish(started);
        } catch (RuntimeException | Error e) {
            for (ServedModel m : started) m.close();
            for (Engine en : engines) if (en != null) en.close();
            throw e;
        }
    }

    /** The node's scheduler settings with the operator's cap applied (it may widen the token budget). */
    private SchedulerConfig baseScheduler() {
        SchedulerConfig sc = config.scheduler();
        Integer rows = config.maxBatchSessions();
        return rows == null ? sc : sc.withBatch(rows, Math.max(rows, sc.maxBatchTokens()));
    }

    /** Operator's flag, else the loaded recommendation for this model, else the configured default. */
    private ConcurrencyLimit limitFor(ModelSpec spec, Engine engine, SchedulerConfig base,
                                      Saturation.Loaded saturation) {
        if (config.maxBatchSessions() != null) {
            return new ConcurrencyLimit(config.maxBatchSessions(), ConcurrencyLimit.Source.OPERATOR,
                    "--max-batch-rows " + config.maxBatchSessions() + " given explicitly"
                            + (saturation.forModel(spec.id()).isPresent() ? " (overrides the loaded recommendation)" : ""));
        }
        return saturation.forModel(spec.id())
                .map(a -> fromRecommendation(a, engine, base))
                .orElseGet(() -> new ConcurrencyLimit(base.maxBatchSessions(), ConcurrencyLimit.Source.DEFAULT,
                        "the scheduler's configured maxBatchSessions: no saturation recommendation for this artifact and recipe"));
    }

    private static ConcurrencyLimit fromRecommendation(Saturation.Applied a, Engine engine, SchedulerConfig base) {
        int cap = Math.min(a.recommendedMaxConcurrency(), Math.min(base.maxBatchTokens(), engine.features().maxRows()));
        String detail = "recommended_max_concurrency " + a.recommendedMaxConcurrency() + " measured at " + a.measuredAt()
                + ", from " + a.path();
        if (cap < a.recommendedMaxConcurrency()) {
            detail += "; capped at " + cap + " rows per forward pass (the scheduler's maxBatchTokens)";
        }
        return new ConcurrencyLimit(cap, ConcurrencyLimit.Source.SATURATION, detail);
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

    /**
     * Joins a tracker with the configured node token: the capability report goes to the tracker every
     * second until {@link #close}. (Requests presenting the node token may name a tenant and use the relay
     * extension, docs/node.md, whether or not the node joined.)
     */
    public void joinTracker(URI tracker) {
        if (config.nodeToken() == null) throw new IllegalStateException("joining a tracker needs the node token (--node-token)");
        String host = config.host();
        if (dgr.node.stage.StagePlan.isWildcard(host)) {
            try {
                host = java.net.InetAddress.getLocalHost().getHostAddress();
            } catch (java.net.UnknownHostException e) {
                throw new IllegalStateException("cannot tell the tracker this node's address (bound to " + config.host() + ")", e);
            }
        }
        URI self = URI.create("http://" + (host.contains(":") ? "[" + host + "]" : host) + ":" + port() + "/");
        // A stage's span, address and load go with the report: the tracker offers later stages to heads.
        trackerAlternates = stage.followTracker(tracker, config.nodeToken());
        trackerLink = TrackerLink.start(tracker, config.nodeToken(), self, () -> stage.addTo(capabilities().build()));
    }

    /** The bound port (the one picked when the config said 0). */
    public int port() { return listener.port(); }

    public String host() { return config.host(); }

    public NodeMetrics metrics() { return metrics; }

    /** The gRPC port of a later stage of a route, or -1. */
    public int stagePort() { return stage.stagePort(); }

    public ModelRegistry models() { return models; }

    @Override
    public void close() {
        // Leave the tracker first (no new requests routed here), stop taking requests, then cancel
        // sessions and free engines.
        TrackerLink link = trackerLink;
        if (link != null) link.close();
        var alternates = trackerAlternates;
        if (alternates != null) alternates.close();
        ListenerWatch l = listener;
        if (l != null) l.close();
        guard.close();
        models.close();
        stage.close();
        recent.close();
    }
}
