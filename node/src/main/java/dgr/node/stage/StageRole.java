package dgr.node.stage;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dgr.engine.Engine;
import dgr.node.NodeConfig;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.util.List;

/**
 * What a node that serves a span of a route holds beside its models: a later stage's server or a
 * head's downstream, and their report. Built by {@code NodeServer} while it loads; empty otherwise.
 */
public final class StageRole implements AutoCloseable {
    private volatile StageReport report;
    private StageServer server;
    /** A later stage's address as heads dial it (null: unknown), or a head's engine and route. */
    private String address;
    private Engine headEngine;
    private HeadDownstream head;

    /** A later stage: serves the one loaded engine on the plan's stage port (the role owns the engine from here). */
    public void startStage(List<Engine> engines, NodeConfig config, StagePlan plan, PrometheusRegistry registry) {
        if (engines.size() != 1) throw new IllegalArgumentException("a stage serves one model's span; " + engines.size() + " models were given");
        Engine e = engines.getFirst();
        warmWire(plan, e);
        server = StageServer.start(e, new StageServer.Options(config.host(), plan.stagePort(), plan.token(), plan.clock(), plan.orphanGrace()));
        engines.set(0, null);
        address = plan.dialAddress(config.host(), server.port());
        report = StageReport.of(server, address);
        report.register(registry);
        System.Logger log = System.getLogger(StageRole.class.getName());
        log.log(System.Logger.Level.INFO, "stage layers [" + e.recipe().firstLayer() + ", " + e.recipe().endLayer() + ") of "
                + e.recipe().nLayers() + " listening for boundary rows on " + config.host() + ":" + server.port());
    }

    /** A head's downstream for its engine, or null when the plan is not a head's. */
    public HeadDownstream head(Engine engine, StagePlan plan, PrometheusRegistry registry) {
        if (plan == null || !plan.isHead()) return null;
        warmWire(plan, engine);
        HeadDownstream d = new HeadDownstream(engine, plan.route(), plan.token(), plan.clock(), plan.routeDepth());
        headEngine = engine;
        head = d;
        report = StageReport.of(engine, d);
        report.register(registry);
        return d;
    }

    /** Compiles the stage transport before this node serves (both ends: a stage is server upstream, client downstream). */
    private static void warmWire(StagePlan plan, Engine e) {
        long nanos = WireWarmUp.run(plan.token(), e.boundarySchema().rowWidth(), WireWarmUp.ROUNDS);
        if (nanos >= 0) {
            System.getLogger(StageRole.class.getName()).log(System.Logger.Level.INFO,
                    "stage transport warm-up: " + WireWarmUp.ROUNDS + " round trips in " + nanos / 1_000_000 + " ms");
        }
    }

    /**
     * What joining a tracker adds to the heartbeats: a head asks the tracker for alternates of its hops (the
     * returned poller, closed by the caller); a later stage is offered to heads at its address, so it must
     * have one (a wildcard bind names no machine). Null for a node that serves no span, or a later stage.
     */
    public TrackerAlternates followTracker(java.net.URI tracker, String nodeToken) {
        if (server != null && address == null) {
            throw new IllegalArgumentException("this stage binds a wildcard address, which heads cannot dial: give --stage-advertise HOST[:PORT]"
                    + " so the tracker can offer it as an alternate");
        }
        if (head == null) return null;
        return TrackerAlternates.start(head, headEngine, new dgr.node.tracker.StageDirectory(tracker, nodeToken));
    }

    /** The bound stage port of a later stage, or -1. */
    public int stagePort() { return server == null ? -1 : server.port(); }

    public ObjectNode addTo(ObjectNode capabilities) {
        StageReport r = report;
        return r == null ? capabilities : r.addTo(capabilities);
    }

    @Override
    public void close() {
        if (server != null) {
            server.close();
            server.engine().close();
        }
    }
}
