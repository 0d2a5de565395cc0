package dgr.tracker.metrics;

import dgr.tracker.registry.NodeRegistry;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.function.IntSupplier;

/**
 * The tracker's Prometheus metrics ({@code dgr_tracker_*}): requests by outcome and node, routing
 * decisions by reason, relay latency, nodes up, failovers. Gauges are read at scrape time.
 */
public final class TrackerMetrics {
    public static final String CONTENT_TYPE = PrometheusTextFormatWriter.CONTENT_TYPE;
    private static final double[] RELAY_BUCKETS = {0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
            0.025, 0.05, 0.1};
    private static final double[] WAIT_BUCKETS = {0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30};

    private final PrometheusRegistry registry = new PrometheusRegistry();
    private final Counter requests;
    private final Counter decisions;
    private final Counter failovers;
    private final Counter recomputed;
    private final Counter pulls;
    private final Histogram relay;
    private final Histogram queueWait;

    public TrackerMetrics(NodeRegistry nodes, IntSupplier queued) {
        requests = Counter.builder().name("dgr_tracker_requests_total")
                .help("Requests by outcome (stop, length, cut, failed, rejected, ...) and the node that ended them")
                .labelNames("outcome", "node").register(registry);
        decisions = Counter.builder().name("dgr_tracker_routing_decisions_total")
                .help("Routing decisions by reason (headroom, headroom_tie_two_choices, held_for_faster, least_load,"
                        + " round_robin, queued_*, queue_wait_spent, resume_*, full, no_node)")
                .labelNames("reason").register(registry);
        failovers = Counter.builder().name("dgr_tracker_failovers_total")
                .help("Requests moved off a failed node: retried before the first byte or resumed mid-stream")
                .labelNames("kind").register(registry);
        recomputed = Counter.builder().name("dgr_tracker_recomputed_tokens_total")
                .help("Tokens computed again on the node a stream was resumed on (prompt and delivered tokens)")
                .register(registry);
        pulls = Counter.builder().name("dgr_tracker_capability_pulls_total")
                .help("GET /v1/capabilities the tracker sent a dgr node, by reason (join, stale, incomplete,"
                        + " unknown_model) and result (ok, failed)")
                .labelNames("reason", "result").register(registry);
        relay = Histogram.builder().name("dgr_tracker_relay_latency_seconds")
                .help("Time from reading a chunk off the node's stream to having flushed it to the client")
                .classicOnly().classicUpperBounds(RELAY_BUCKETS).register(registry);
        queueWait = Histogram.builder().name("dgr_tracker_queue_wait_seconds")
                .help("Time a request waited for headroom before it was routed or refused")
                .classicOnly().classicUpperBounds(WAIT_BUCKETS).register(registry);
        GaugeWithCallback.builder().name("dgr_tracker_nodes_up").help("Nodes in routing (healthy)")
                .callback(cb -> cb.call(nodes.all().stream().filter(nodes::healthy).count()))
                .register(registry);
        GaugeWithCallback.builder().name("dgr_tracker_nodes_registered").help("Nodes known, healthy or not")
                .callback(cb -> cb.call(nodes.all().size())).register(registry);
        GaugeWithCallback.builder().name("dgr_tracker_requests_queued").help("Requests waiting for headroom")
                .callback(cb -> cb.call(queued.getAsInt())).register(registry);
        for (String kind : new String[] {"retry_before_first_byte", "resume_mid_stream"}) failovers.labelValues(kind);
    }

    public void request(String outcome, String node) { requests.labelValues(outcome, node == null ? "" : node).inc(); }

    public void decision(String reason) { decisions.labelValues(reason).inc(); }

    public void failover(String kind) { failovers.labelValues(kind).inc(); }

    public void recomputed(long tokens) { recomputed.inc(tokens); }

    public void capabilityPull(String reason, boolean ok) { pulls.labelValues(reason, ok ? "ok" : "failed").inc(); }

    public void relayed(long nanos) { relay.observe(nanos / 1e9); }

    public void queueWait(long nanos) { queueWait.observe(nanos / 1e9); }

    /** The Prometheus text exposition (format 0.0.4). */
    public byte[] scrape() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try {
            PrometheusTextFormatWriter.create().write(out, registry.scrape());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toByteArray();
    }
}
