package dgr.cli;

import dgr.engine.EngineOptions;
import dgr.node.NodeServer;
import dgr.node.stage.StagePlan;
import java.time.Duration;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code serve}'s flags for one model across several nodes (docs/stages.md). A later stage:
 * {@code --layers A:B --stage-port P --cluster-token T}; the head:
 * {@code --layers 0:A --route HOST:P[|ALT_HOST:ALT_P...],HOST:P... --cluster-token T}.
 */
public final class StageOptions {
    @Spec(Spec.Target.MIXEE)
    CommandSpec spec;

    @Option(names = "--layers", paramLabel = "A:B", description = "serve only layers [A, B) of the model: 0:A makes this node the head of a route"
            + " (give --route), A>0 a later stage (give --stage-port)")
    String layers;

    @Option(names = "--stage-port", paramLabel = "P", description = "a later stage's gRPC port for boundary rows from upstream (0 picks a free one)")
    Integer stagePort;

    @Option(names = "--route", paramLabel = "HOST:P[|ALT:P...],...", description = "the head's route: the stages after its span in order,"
            + " each hop's alternates after '|' (they take the hop's sessions if it dies or hangs)")
    String route;

    @Option(names = "--cluster-token", paramLabel = "T", description = "shared secret every stage stream carries; a peer without it is refused")
    String clusterToken;

    @Option(names = "--stage-orphan-grace", paramLabel = "DURATION", defaultValue = "10s",
            description = "how long a later stage keeps a session whose upstream stream broke, for a failover to re-attach it (default: ${DEFAULT-VALUE})")
    String orphanGrace;

    @Option(names = "--stage-reply-floor", paramLabel = "DURATION", defaultValue = "250ms",
            description = "least time a stage waits for a reply from downstream before it calls the stage hung; the deadline adds"
                    + " 4 x the step time measured on that link, the silence allowed (no reply, no pulse) 3 x the stage's pulse period"
                    + " or longest recent gap (default: ${DEFAULT-VALUE})")
    String replyFloor;

    @Option(names = "--route-depth", paramLabel = "N", description = "micro-batches the head keeps on its route at once (default: one per"
            + " stage, so every stage computes at once; 1 suits stages that share one machine's cores, each using all of them)")
    Integer routeDepth;

    @Option(names = "--stage-advertise", paramLabel = "HOST[:PORT]", description = "a later stage's address as heads dial it, which a tracker"
            + " (--tracker) offers them as an alternate of the hop serving its span (default: --host and the bound stage port;"
            + " needed when --host is 0.0.0.0 or behind a forwarded port)")
    String advertise;

    /** The plan, or null when no stage flag was given. */
    StagePlan plan() {
        if (layers == null) {
            if (stagePort != null || route != null || clusterToken != null || routeDepth != null || advertise != null) {
                throw new IllegalArgumentException("--stage-port, --route, --route-depth, --stage-advertise and --cluster-token need --layers A:B (the span this node serves)");
            }
            return null;
        }
        Duration grace = DurationFlag.parse("--stage-orphan-grace", orphanGrace);
        StagePlan plan = StagePlan.of(layers, route, stagePort, clusterToken, grace, DurationFlag.parse("--stage-reply-floor", replyFloor), routeDepth);
        return advertise == null ? plan : plan.withAdvertise(advertise);
    }

    /** A later stage that joins a tracker is offered to heads at its address: refused before loading when it has none. */
    static void requireDialable(StagePlan plan, String host, boolean joinsTracker) {
        if (plan == null || plan.isHead() || !joinsTracker) return;
        if (plan.dialAddress(host, Math.max(1, plan.stagePort())) == null) {
            throw new IllegalArgumentException("--host " + host + " binds every interface, which heads cannot dial: give --stage-advertise"
                    + " HOST[:PORT] so the tracker (--tracker) can offer this stage as an alternate");
        }
    }

    /** The engine options with the plan's span. */
    EngineOptions span(EngineOptions eo, StagePlan plan, int models) {
        if (plan == null) return eo;
        if (models != 1) throw new IllegalArgumentException("--layers serves a span of one model; " + models + " were given");
        return eo.withSpan(plan.firstLayer(), plan.endLayer());
    }

    /** A later stage answers HTTP (health, capabilities, metrics) on a free port unless --port is given. */
    int httpPort(StagePlan plan, int port) {
        boolean given = spec != null && spec.commandLine() != null && spec.commandLine().getParseResult() != null
                && spec.commandLine().getParseResult().hasMatchedOption("--port");
        return plan != null && !plan.isHead() && !given ? 0 : port;
    }

    static String describe(NodeServer node) {
        return node.stagePort() < 0 ? "" : "; stage listening for boundary rows on " + node.host() + ":" + node.stagePort();
    }
}
