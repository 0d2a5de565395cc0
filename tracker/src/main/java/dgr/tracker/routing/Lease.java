package dgr.tracker.routing;

import dgr.tracker.registry.NodeRegistry;
import dgr.tracker.registry.RegisteredNode;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A session placed on a node: counted in the node's in-flight sessions from routing until closed, so
 * the next routing decision sees it at once. Closing twice releases once.
 *
 * @param reason why the router chose this node (a {@code dgr_tracker_routing_decisions_total} label)
 */
public final class Lease implements AutoCloseable {
    private final NodeRegistry registry;
    private final RegisteredNode node;
    private final String model;
    private final String reason;
    private final AtomicBoolean open = new AtomicBoolean(true);
    private final long routedAt = System.nanoTime();
    private volatile boolean streamed;

    Lease(NodeRegistry registry, RegisteredNode node, String model, String reason) {
        this.registry = registry;
        this.node = node;
        this.model = model;
        this.reason = reason;
        registry.leased(node, model);
    }

    public RegisteredNode node() { return node; }

    public String model() { return model; }

    public String reason() { return reason; }

    /** The node's first chunk arrived: its time since routing goes to the node's {@link dgr.tracker.registry.ServiceTimes}. */
    public void firstToken() {
        if (streamed) return;
        streamed = true;
        node.times(model).firstToken(System.nanoTime() - routedAt);
    }

    @Override
    public void close() {
        if (!open.compareAndSet(true, false)) return;
        // Only a session that streamed tells how long a slot stays taken (a refusal or a failure says nothing).
        if (streamed) node.times(model).session(System.nanoTime() - routedAt);
        registry.released(node, model);
    }
}
