package dgr.tracker.routing;

import dgr.tracker.registry.NodeRegistry;
import dgr.tracker.registry.RegisteredNode;

/** Test help: what the tracker would have seen of a node serving RouterTest's model. */
final class RegisteredNodes {
    private RegisteredNodes() {}

    /** Sets the node's averages (each first observation is the average) to these seconds. */
    static void seen(NodeRegistry r, String id, double firstTokenSeconds, double sessionSeconds) {
        RegisteredNode n = r.find(id).orElseThrow();
        n.times("m").firstToken((long) (firstTokenSeconds * 1e9));
        n.times("m").session((long) (sessionSeconds * 1e9));
    }
}
