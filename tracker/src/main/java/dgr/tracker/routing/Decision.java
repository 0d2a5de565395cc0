package dgr.tracker.routing;

/** What the router answers for one request. */
public sealed interface Decision {
    /** A node was chosen; the lease counts the session on it until closed. */
    record Routed(Lease lease, long waitedNanos) implements Decision {}

    /** No healthy node serves the model (with the recipe, when one was required) outside the excluded ones. */
    record NoNode(String model, boolean anyKnown) implements Decision {}

    /** Every eligible node is at its recommendation and the bounded queue is full or its wait ran out. */
    record Full(String model, long waitedNanos, boolean queueFull) implements Decision {}
}
