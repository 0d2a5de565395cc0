package dgr.node.http;

import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.util.function.LongSupplier;

/** The listener's figures on /metrics: connections open and refused, and listener restarts. */
public final class ListenerStats {
    private ListenerStats() {}

    public static void register(PrometheusRegistry registry, ConnectionGuard guard, LongSupplier restarts) {
        GaugeWithCallback.builder().name("dgr_connections_open")
                .help("Client connections open and served (over the cap, new ones are answered 503)")
                .callback(cb -> cb.call(guard.openConnections())).register(registry);
        CounterWithCallback.builder().name("dgr_connections_refused_total")
                .help("Client connections answered 503 and closed because the connection cap was reached")
                .callback(cb -> cb.call(guard.refusedConnections())).register(registry);
        CounterWithCallback.builder().name("dgr_listener_restarts_total")
                .help("Times the HTTP listener was found stopped (e.g. accept failed: out of file descriptors) and started again")
                .callback(cb -> cb.call(restarts.getAsLong())).register(registry);
    }
}
