package dgr.node.metrics;

import dgr.runtime.Accounting;
import dgr.runtime.FinishReason;
import dgr.runtime.SchedulerEvent;
import dgr.runtime.SchedulerListener;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.Gauge;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * The node's Prometheus metrics: vLLM's names and meanings with the {@code dgr_} prefix, each
 * labelled by model. Session and iteration numbers come from the schedulers' events; gauges of live
 * load are read from the schedulers at scrape time.
 */
public final class NodeMetrics {
    public static final String CONTENT_TYPE = PrometheusTextFormatWriter.CONTENT_TYPE;

    // vLLM's bucket bounds for the same histograms, so dashboards built for vLLM read ours alike.
    private static final double[] TTFT_BUCKETS = {0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75,
            1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0};
    private static final double[] ITL_BUCKETS = {0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0,
            2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0};
    private static final double[] REQUEST_BUCKETS = {0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0,
            40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0};
    private static final double[] ROW_BUCKETS = {1, 2, 4, 8, 16, 32, 64, 128, 256};

    private final PrometheusRegistry registry = new PrometheusRegistry();
    private final Map<String, Supplier<Load>> loads = new ConcurrentHashMap<>();
    private final Counter requests;
    private final Counter promptTokens;
    private final Counter generationTokens;
    private final Histogram ttft;
    private final Histogram itl;
    private final Histogram e2e;
    private final Histogram queue;
    private final Histogram batchRows;
    private final Gauge occupancy;
    private final Map<String, java.util.function.LongSupplier> pools = new ConcurrentHashMap<>();
    private final Map<String, TokenTally> tallies = new ConcurrentHashMap<>();
    /** The scheduler's cancellation message for an expired deadline. */
    private static final String DEADLINE_MESSAGE = "deadline exceeded";
    private static final String TIMEOUT = "timeout";

    public NodeMetrics() {
        requests = Counter.builder().name("dgr_requests_total")
                .help("Requests that reached a scheduler, by outcome (stop, length, cancelled, timeout, error, rejected)")
                .labelNames("model", "outcome").register(registry);
        promptTokens = Counter.builder().name("dgr_prompt_tokens_total")
                .help("Prompt tokens processed").labelNames("model").register(registry);
        generationTokens = Counter.builder().name("dgr_generation_tokens_total")
                .help("Tokens generated").labelNames("model").register(registry);
        ttft = histogram("dgr_time_to_first_token_seconds", "Time from submission to the first token", TTFT_BUCKETS);
        itl = histogram("dgr_inter_token_latency_seconds", "Time between consecutive generated tokens", ITL_BUCKETS);
        e2e = histogram("dgr_e2e_request_latency_seconds", "Time from request arrival to its last byte",
                REQUEST_BUCKETS);
        queue = histogram("dgr_request_queue_time_seconds", "Time from submission to admission", REQUEST_BUCKETS);
        batchRows = histogram("dgr_batch_rows", "Sessions with rows in one iteration's batch", ROW_BUCKETS);
        occupancy = Gauge.builder().name("dgr_batch_occupancy")
                .help("Rows of the last iteration's batch divided by the batch row limit")
                .labelNames("model").register(registry);
        loadGauge("dgr_num_requests_running", "Sessions admitted and running", l -> l.running());
        loadGauge("dgr_num_requests_waiting", "Sessions waiting for admission", l -> l.waiting());
        loadGauge("dgr_state_bytes_used", "State bytes held by running sessions", l -> l.stateBytesUsed());
        loadGauge("dgr_state_bytes_budget", "State bytes the scheduler may reserve", l -> l.stateBudgetBytes());
        GaugeWithCallback.builder().name("dgr_state_bytes_pooled")
                .help("Freed state bytes the engine keeps for reuse, beside dgr_state_bytes_used").labelNames("model")
                .callback(cb -> pools.forEach((model, bytes) -> cb.call(bytes.getAsLong(), model)))
                .register(registry);
    }

    private Histogram histogram(String name, String help, double[] bounds) {
        return Histogram.builder().name(name).help(help).labelNames("model").classicOnly()
                .classicUpperBounds(bounds).register(registry);
    }

    private void loadGauge(String name, String help, java.util.function.ToDoubleFunction<Load> value) {
        GaugeWithCallback.builder().name(name).help(help).labelNames("model")
                .callback(cb -> loads.forEach((model, load) -> cb.call(value.applyAsDouble(load.get()), model)))
                .register(registry);
    }

    /**
     * Registers a model: its live load for the gauges, and the listener to add to its scheduler.
     *
     * @param maxBatchSessions the scheduler's batch row limit (occupancy's denominator)
     */
    public SchedulerListener register(String model, int maxBatchSessions, Supplier<Load> load) {
        loads.put(model, load);
        // Series exist from the start, so a scrape before the first request shows zeros, not gaps.
        for (FinishReason r : FinishReason.values()) requests.labelValues(model, r.wireName());
        requests.labelValues(model, "rejected");
        requests.labelValues(model, TIMEOUT);
        promptTokens.labelValues(model);
        generationTokens.labelValues(model);
        occupancy.labelValues(model).set(0);
        return event -> onEvent(model, maxBatchSessions, event);
    }

    private void onEvent(String model, int maxBatchSessions, SchedulerEvent event) {
        switch (event) {
            case SchedulerEvent.IterationEvent it -> {
                batchRows.labelValues(model).observe(it.sessions());
                tally(model).iteration(it, generationTokens.labelValues(model));
                occupancy.labelValues(model).set(it.occupancy(maxBatchSessions));
            }
            case SchedulerEvent.SessionEnded end -> {
                tally(model).ended(end, generationTokens.labelValues(model));
                sessionEnded(model, outcome(end), end.accounting());
            }
            case SchedulerEvent.SessionRejected r -> requests.labelValues(model, "rejected").inc();
            case SchedulerEvent.SessionAdmitted a -> queue.labelValues(model).observe(a.queueNanos() / 1e9);
            default -> { } // events added later carry nothing these metrics need yet
        }
    }

    /**
     * The outcome label: the finish reason's wire name, except a deadline that ended the session is
     * {@code timeout}, not {@code cancelled} (the scheduler cancels with its documented message).
     */
    private static String outcome(SchedulerEvent.SessionEnded end) {
        if (end.reason() == FinishReason.CANCELLED && DEADLINE_MESSAGE.equals(end.message())) return TIMEOUT;
        return end.reason().wireName();
    }

    private TokenTally tally(String model) {
        return tallies.computeIfAbsent(model, m -> new TokenTally());
    }

    /**
     * Registers the model's pooled state (freed pages kept for reuse) as {@code dgr_state_bytes_pooled}:
     * memory the node holds beyond {@code dgr_state_bytes_used}.
     */
    public void registerPool(String model, java.util.function.LongSupplier pooledBytes) {
        pools.put(model, pooledBytes);
    }

    private void sessionEnded(String model, String outcome, Accounting a) {
        requests.labelValues(model, outcome).inc();
        promptTokens.labelValues(model).inc(a.promptTokens());
        if (a.ttftNanos() >= 0) ttft.labelValues(model).observe(a.ttftNanos() / 1e9);
        for (long d : a.interTokenNanos()) itl.labelValues(model).observe(d / 1e9);
    }

    /** End-to-end latency of one request, measured by the HTTP layer from arrival to its last byte. */
    public void observeE2e(String model, long nanos) {
        e2e.labelValues(model).observe(nanos / 1e9);
    }

    /** The registry, for parts that add their own metrics (a stage's route gauges). */
    public PrometheusRegistry registry() { return registry; }

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
