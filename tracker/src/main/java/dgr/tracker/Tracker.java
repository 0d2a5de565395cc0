package dgr.tracker;

import dgr.tracker.ledger.Ledger;
import dgr.tracker.ledger.NodeAccountingClient;
import dgr.tracker.metrics.TrackerMetrics;
import dgr.tracker.registry.BackendPoller;
import dgr.tracker.registry.CapabilityPuller;
import dgr.tracker.registry.NodeRegistry;
import dgr.tracker.relay.NodeClient;
import dgr.tracker.routing.Router;
import java.time.Clock;

/**
 * The parts behind the tracker's HTTP API, built once per tracker: the node registry, the router over
 * it, the client that relays to nodes, the poller of OpenAI backends, the puller of dgr nodes' capability
 * reports, the ledger and the metrics.
 */
public final class Tracker implements AutoCloseable {
    private final TrackerConfig config;
    private final NodeRegistry registry;
    private final Router router;
    private final TrackerMetrics metrics;
    private final NodeClient nodes;
    private final BackendPoller poller;
    private final CapabilityPuller capabilities;
    private final Ledger ledger;
    private final NodeAccountingClient nodeAccounting = new NodeAccountingClient();

    Tracker(TrackerConfig config, Ledger ledger) {
        this.config = config;
        this.ledger = ledger;
        this.registry = new NodeRegistry(config.heartbeatTimeout(), Clock.systemUTC());
        this.router = new Router(registry, config.routing(), config.maxQueueWait(), config.maxQueuedRequests());
        this.metrics = new TrackerMetrics(registry, router::queued);
        this.nodes = new NodeClient(config.connectTimeout(), config.firstByteTimeout(), config.chunkTimeout(),
                config.nodeToken());
        this.poller = new BackendPoller(registry, nodes);
        // Its own client: a pull that times out must not disturb the connections requests are relayed on.
        this.capabilities = new CapabilityPuller(registry, new NodeClient(config.connectTimeout(), CapabilityPuller.TIMEOUT,
                config.chunkTimeout(), config.nodeToken()), metrics);
    }

    public TrackerConfig config() { return config; }

    public NodeRegistry registry() { return registry; }

    public Router router() { return router; }

    public TrackerMetrics metrics() { return metrics; }

    public NodeClient nodes() { return nodes; }

    public BackendPoller poller() { return poller; }

    /** Pulls dgr nodes' /v1/capabilities when their pushed reports are not enough. */
    public CapabilityPuller capabilities() { return capabilities; }

    public Ledger ledger() { return ledger; }

    /** Asks dgr nodes for their exact accounting of request ids (cut streams, recovery). */
    public NodeAccountingClient nodeAccounting() { return nodeAccounting; }

    @Override
    public void close() {
        poller.close();
        capabilities.close();
        nodes.close();
        ledger.close();
    }
}
