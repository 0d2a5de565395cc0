package dgr.tracker.routing;

import dgr.tracker.registry.ModelCapacity;
import dgr.tracker.registry.RegisteredNode;
import dgr.tracker.registry.ServiceTimes;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * When a new request is expected to get its first token on each of a set of nodes, in seconds: the wait
 * for a slot, then the node's time to first token (docs/tracker.md, "Routing").
 *
 * <p>A node with headroom starts the request at once: {@code F}, the node's time to first token. A node at
 * its recommendation {@code r} first ends {@code q = running + ahead + 1 − r} sessions; with {@code r}
 * sessions of {@code D} seconds each running, one ends every {@code D/r} seconds: {@code q·D/r + F}.
 * {@code F} and {@code D} are what the tracker saw of the node ({@link ServiceTimes}); before it has seen
 * the node serve, they come from the node's measured per-session speed {@code s}
 * ({@code expected_per_session_output_throughput}): a first token as {@link #PRIOR_FIRST_TOKEN_TOKENS}
 * token times, a session as {@link #PRIOR_SESSION_TOKENS}. So a request waits for a busy fast node only
 * while that is sooner than a first token from an idle slow one, and as the queue for the fast node grows,
 * the slow node takes the next request.
 *
 * <p>When some node's speeds are unknown (no saturation recommendation), nothing is compared in seconds
 * and every node counts as equally fast, one session as the unit ({@code F = D = 1}): {@code 1 + q/r}.
 * Then any node with headroom beats every full one, which is routing by headroom alone.
 *
 * <p>Built once per routing decision: it reads each node's times once, so one decision sees one estimate.
 *
 * @param model    the model asked for
 * @param measured whether every node's speeds are known
 * @param times    each node's {@code {F, D}}
 */
record ExpectedDelay(String model, boolean measured, Map<RegisteredNode, double[]> times) {
    /** Delays closer than this are a tie. */
    static final double EPSILON = 1e-9;
    /** A first token, before the tracker has seen one from the node, in the node's per-session token times. */
    static final double PRIOR_FIRST_TOKEN_TOKENS = 8;
    /** A session, before the tracker has seen one end on the node, in its per-session token times. */
    static final double PRIOR_SESSION_TOKENS = 32;

    static ExpectedDelay of(List<RegisteredNode> nodes, String model) { return of(nodes, model, new HashMap<>()); }

    /**
     * The same, reading each node's {@link ServiceTimes} through {@code seen} ({@code {F, D}} by node id and model), so
     * that all the decisions of one dispatch pass see the same times.
     */
    static ExpectedDelay of(List<RegisteredNode> nodes, String model, Map<String, double[]> seen) {
        boolean all = true;
        for (RegisteredNode n : nodes) all &= n.models().get(model).speedMeasured();
        Map<RegisteredNode, double[]> times = new IdentityHashMap<>();
        for (RegisteredNode n : nodes) times.put(n, all ? seen.computeIfAbsent(Router.key(n, model), k -> observed(n, model)) : new double[] {1, 1});
        return new ExpectedDelay(model, all, times);
    }

    /** {@code {F, D}} as the tracker saw them, each from the node's measured speed until it has. */
    private static double[] observed(RegisteredNode n, String model) {
        double tokenTime = 1 / n.models().get(model).sessionThroughput();
        ServiceTimes seen = n.times(model);
        double f = seen.firstTokenSeconds(), d = seen.sessionSeconds();
        return new double[] {Double.isNaN(f) ? PRIOR_FIRST_TOKEN_TOKENS * tokenTime : f,
                Double.isNaN(d) ? PRIOR_SESSION_TOKENS * tokenTime : d};
    }

    /** The expected delay of a request on {@code n} with {@code ahead} requests already waiting for it. */
    double of(RegisteredNode n, int ahead) { return of(n, n.running(model), ahead); }

    /** The same, with the node's running sessions as the caller counted them. */
    double of(RegisteredNode n, int running, int ahead) {
        ModelCapacity m = n.models().get(model);
        int r = m.recommendedMaxConcurrency();
        int queue = Math.max(0, running + ahead + 1 - r);
        double[] fd = times.get(n);
        return fd[0] + queue * fd[1] / r;
    }
}
