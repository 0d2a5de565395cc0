package dgr.node.stage;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dgr.engine.BoundarySchema;
import dgr.engine.Engine;
import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.util.List;
import java.util.function.Supplier;

/**
 * A node's route facts for {@code /v1/capabilities} (its span, boundary schema and neighbours) and
 * {@code /metrics} (sessions, state and kept bytes, the pipeline bubble, failovers). One of the two
 * sources is set: a later stage's server or a head's downstream.
 */
public final class StageReport {
    private final Engine engine;
    private final StageServer stage;
    private final HeadDownstream head;
    /** Where heads dial a later stage (null: unknown, its host is a wildcard); unused on a head. */
    private final String address;

    private StageReport(Engine engine, StageServer stage, HeadDownstream head, String address) {
        this.engine = engine;
        this.stage = stage;
        this.head = head;
        this.address = address;
    }

    /** A later stage's report; {@code address} is where heads dial it, what a tracker offers them as an alternate. */
    public static StageReport of(StageServer stage, String address) { return new StageReport(stage.engine(), stage, null, address); }

    public static StageReport of(Engine headEngine, HeadDownstream head) { return new StageReport(headEngine, null, head, null); }

    /** Adds {@code "stage": {...}} to a capability report. */
    public ObjectNode addTo(ObjectNode report) {
        ObjectNode o = report.putObject("stage");
        var r = engine.recipe();
        o.put("role", head != null ? "head" : r.isLastStage() ? "last" : "middle");
        o.putArray("span").add(r.firstLayer()).add(r.endLayer());
        o.put("n_layers", r.nLayers());
        o.put("recipe_id", r.id());
        o.put("model_recipe_id", Wire.modelRecipeId(engine));
        BoundarySchema b = engine.boundarySchema();
        ObjectNode bs = o.putObject("boundary_schema");
        bs.put("id", b.id()).put("architecture", b.architecture()).put("row_width", b.rowWidth()).put("dtype", b.dtype()).put("version", b.version());
        o.put("protocol", "dgr.stage.v" + Wire.PROTOCOL);
        ObjectNode n = o.putObject("neighbours");
        if (stage != null) {
            o.put("stage_port", stage.port());
            // What a tracker needs to offer this stage to heads as an alternate of a hop serving the same span.
            o.put("address", address);
            o.putObject("state_layout").put("id", engine.stateLayout().id());
            o.putObject("engine").put("id", engine.id().toString());
            o.put("max_batch_rows", engine.features().maxRows());
            stage.upstream().forEach(n.putArray("upstream")::add);
            stage.stats().downstream().forEach(n.putArray("downstream")::add);
            o.put("sessions", stage.stats().sessions());
            o.put("state_bytes", stage.stats().stateBytes());
            o.put("kept_row_bytes", stage.stats().keptBytes());
        } else {
            var hops = n.putArray("route");
            for (RouteSpec.Hop h : head.route().hops()) hops.add(String.join("|", h.addresses()));
            var supplied = n.putArray("tracker_alternates");
            for (int h = 0; h < head.route().hops().size(); h++) {
                var hop = supplied.addArray();
                head.supplied(h).forEach(hop::add);
            }
            head.neighbours().forEach(n.putArray("downstream")::add);
            o.put("kept_row_bytes", head.keptBytes());
            o.put("recovered_sessions", head.recoveredSessions());
            o.put("recomputed_tokens", head.recomputedTokensTotal());
            o.put("depth", head.depth());
            o.put("batches_in_flight", head.flights());
        }
        return report;
    }

    /** Registers the route gauges on the node's registry. */
    public void register(PrometheusRegistry registry) {
        gauge(registry, "dgr_stage_bubble_fraction", "Fraction of time this stage's span waited instead of computing (the pipeline's bubble)",
                () -> stage != null ? stage.stats().idleFraction() : head.waitFraction());
        gauge(registry, "dgr_stage_kept_row_bytes", "Bytes of boundary rows kept for replay to a replacement stage",
                () -> (double) (stage != null ? stage.stats().keptBytes() : head.keptBytes()));
        if (stage != null) {
            gauge(registry, "dgr_stage_sessions", "Sessions held by this stage", () -> (double) stage.stats().sessions());
            gauge(registry, "dgr_stage_state_bytes", "State bytes of the sessions held by this stage", () -> (double) stage.stats().stateBytes());
            gauge(registry, "dgr_stage_row_transit_p50_seconds", "Median over the last 1024 decode rows of the per-hop latency into this"
                    + " stage: the upstream stage handing a row to its transport to this stage's forward starting on it (NaN: none"
                    + " from a process on this host's clock)", () -> seconds(stage.stats().rowTransitP50()));
            CounterWithCallback.builder().name("dgr_stage_rows").help("Boundary rows this stage computed")
                    .callback(cb -> cb.call(stage.stats().rows())).register(registry);
            CounterWithCallback.builder().name("dgr_stage_replayed_rows").help("Rows recomputed from kept rows replayed after a failover")
                    .callback(cb -> cb.call(stage.stats().replayedRows())).register(registry);
            CounterWithCallback.builder().name("dgr_stage_busy_seconds").help("Time this stage's span computed (1 - its rate is the stage's bubble over a window)")
                    .callback(cb -> cb.call(stage.stats().busyNanos() / 1e9)).register(registry);
        } else {
            gauge(registry, "dgr_route_reply_overhead_p50_seconds", "Median over the last 1024 replies of the route's time beyond the last stage's"
                    + " computing (transport of a row down and its token back; NaN: none yet)", () -> seconds(head.replyOverheadP50()));
            gauge(registry, "dgr_route_token_transit_p50_seconds", "Median over the last 1024 replies of a token's way back: the last"
                    + " stage handing it to its transport to the head's scheduler taking it (NaN: none from a process on this host's clock)",
                    () -> seconds(head.tokenTransitP50()));
            gauge(registry, "dgr_route_batches_in_flight", "Micro-batches on the route whose tokens the head awaits", () -> (double) head.flights());
            CounterWithCallback.builder().name("dgr_route_recovered_sessions").help("Sessions moved to an alternate stage after a failure")
                    .callback(cb -> cb.call(head.recoveredSessions())).register(registry);
            CounterWithCallback.builder().name("dgr_route_wait_seconds").help("Time the head waited for its route's tokens with nothing to compute"
                            + " (its rate is the head's bubble over a window)")
                    .callback(cb -> cb.call(head.waitedNanos() / 1e9)).register(registry);
            CounterWithCallback.builder().name("dgr_route_clock_seconds").help("Time since the head's route started (the denominator of its bubble)")
                    .callback(cb -> cb.call(head.clockNanos() / 1e9)).register(registry);
            CounterWithCallback.builder().name("dgr_route_recomputed_tokens").help("Positions a replacement stage computed again after a failover")
                    .callback(cb -> cb.call(head.recomputedTokensTotal())).register(registry);
            // Each later stage's counters as it last reported them: its bubble over a window is 1 - Δbusy / Δclock.
            CounterWithCallback.builder().name("dgr_route_stage_busy_seconds").help("Time a later stage of the route computed, as it last reported")
                    .labelNames("span").callback(cb -> head.load().spans().forEach((span, l) -> cb.call(l.busyNanos() / 1e9, span))).register(registry);
            CounterWithCallback.builder().name("dgr_route_stage_clock_seconds").help("Time since a later stage of the route started, as it last reported")
                    .labelNames("span").callback(cb -> head.load().spans().forEach((span, l) -> cb.call(l.clockNanos() / 1e9, span))).register(registry);
        }
    }

    /** A median in nanoseconds as seconds; NaN when nothing was measured (-1). */
    private static double seconds(long nanos) { return nanos < 0 ? Double.NaN : nanos / 1e9; }

    private static void gauge(PrometheusRegistry registry, String name, String help, Supplier<Double> value) {
        GaugeWithCallback.builder().name(name).help(help).callback(cb -> cb.call(value.get())).register(registry);
    }

    List<String> downstream() { return stage != null ? stage.stats().downstream() : head.neighbours(); }
}
