package dgr.tracker.routing;

import dgr.tracker.registry.ModelCapacity;
import dgr.tracker.registry.RegisteredNode;
import java.util.List;

/**
 * When a new request is expected to finish on each of a set of nodes, from what each measured in its
 * saturation recommendation: seconds per output token of the request (the request's length is the same
 * wherever it runs, so it drops out of the comparison).
 *
 * <p>On a node with headroom the request starts at once and runs at the node's per-session speed
 * {@code s} ({@code expected_per_session_output_throughput}): {@code 1/s}. On a node at its
 * recommendation {@code r} it first waits for {@code q = running + ahead + 1 − r} sessions to end, which
 * the node finishes at its total speed {@code X} ({@code expected_output_throughput}):
 * {@code q/X + 1/s}. This is the shortest-expected-delay rule for servers of different speeds, with each
 * server's concurrency capped at its recommendation.
 *
 * <p>When some node's speeds are unknown (no saturation recommendation), speeds cannot be compared and
 * every node counts as equally fast, one session's duration as the unit: {@code 1 + q/r}. Then any node
 * with headroom beats every full one, which is routing by headroom alone.
 *
 * @param model    the model asked for
 * @param measured whether every node's speeds are known
 */
record ExpectedDelay(String model, boolean measured) {
    /** Delays closer than this are a tie. */
    static final double EPSILON = 1e-9;

    static ExpectedDelay of(List<RegisteredNode> nodes, String model) {
        boolean all = true;
        for (RegisteredNode n : nodes) all &= n.models().get(model).speedMeasured();
        return new ExpectedDelay(model, all);
    }

    /** The expected delay of a request on {@code n} with {@code ahead} requests already waiting for it. */
    double of(RegisteredNode n, int ahead) { return of(n, n.running(model), ahead); }

    /** The same, with the node's running sessions as the caller counted them. */
    double of(RegisteredNode n, int running, int ahead) {
        ModelCapacity m = n.models().get(model);
        int r = m.recommendedMaxConcurrency();
        int queue = Math.max(0, running + ahead + 1 - r);
        if (measured) return queue / m.outputThroughput() + 1 / m.sessionThroughput();
        return 1.0 + (double) queue / r;
    }
}
