package dgr.tracker.routing;

import dgr.tracker.registry.NodeRegistry;
import dgr.tracker.registry.RegisteredNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Chooses the node for one request, from the healthy nodes serving its model (and recipe, for a
 * resumed stream), under the configured {@link RoutingPolicy}.
 *
 * <p>Capacity routing: a node can take a session while its headroom (recommended_max_concurrency −
 * running) is positive; the node with the most headroom wins. Among equal headroom the node whose
 * measurement promises a session more tokens/s wins (an idle fast node before an idle slow one); what is
 * still tied goes to the less loaded of two picked at random (power of two choices). When every eligible node is at its recommendation the request waits
 * in a bounded queue ({@code maxQueued} requests, {@code maxQueueWait} each) for a lease to end or a
 * report to raise capacity, then gets {@link Decision.Full} (HTTP 429 with Retry-After). Choosing and
 * counting the lease happen under one lock, so two requests never both take a node's last slot.
 *
 * <p>The blind policies (least-load, round-robin) never queue: like the routers they stand for, they
 * hand every request to some node and let its own scheduler queue it.
 */
public final class Router {
    private final NodeRegistry registry;
    private final RoutingPolicy policy;
    private final long maxQueueWaitNanos;
    private final int maxQueued;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition capacity = lock.newCondition();
    private final AtomicLong turn = new AtomicLong();
    private int queued;

    public Router(NodeRegistry registry, RoutingPolicy policy, Duration maxQueueWait, int maxQueued) {
        this.registry = registry;
        this.policy = policy;
        this.maxQueueWaitNanos = maxQueueWait.toNanos();
        this.maxQueued = maxQueued;
        registry.onCapacityChange(this::wake);
    }

    public RoutingPolicy policy() { return policy; }

    /** Requests now waiting for headroom. */
    public int queued() {
        lock.lock();
        try {
            return queued;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Routes a request for {@code model}; with {@code resumeKey} only nodes serving that recipe on that
     * engine (a resumed stream); never one of {@code exclude} (nodes that already failed this request).
     * A resumed stream never waits for headroom: its client is already being served, so it goes to the
     * eligible node with the most headroom even when that is none, and that node's scheduler queues it.
     */
    public Decision route(String model, String resumeKey, Set<String> exclude) throws InterruptedException {
        long start = System.nanoTime();
        boolean counted = false;
        lock.lockInterruptibly();
        try {
            while (true) {
                List<RegisteredNode> eligible = eligibleOf(model, resumeKey, exclude);
                if (eligible.isEmpty()) {
                    return new Decision.NoNode(model, registry.all().stream().anyMatch(n -> n.models().containsKey(model)));
                }
                Pick pick = choose(eligible, model);
                if (pick == null && resumeKey != null) {
                    pick = new Pick(best(eligible, n -> n.headroom(model)).getFirst(), "resume_over_capacity");
                }
                if (pick != null) {
                    String reason = counted ? "queued_" + pick.reason : pick.reason;
                    return new Decision.Routed(new Lease(registry, pick.node, model, reason), System.nanoTime() - start);
                }
                if (!counted) {
                    if (queued >= maxQueued) return new Decision.Full(model, System.nanoTime() - start, true);
                    queued++;
                    counted = true;
                }
                long left = maxQueueWaitNanos - (System.nanoTime() - start);
                if (left <= 0) return new Decision.Full(model, System.nanoTime() - start, false);
                // Woken by a lease ending or a report; the cap re-checks heartbeats that lapse meanwhile.
                capacity.awaitNanos(Math.min(left, TimeUnit.MILLISECONDS.toNanos(250)));
            }
        } finally {
            if (counted) queued--;
            lock.unlock();
        }
    }

    private List<RegisteredNode> eligibleOf(String model, String resumeKey, Set<String> exclude) {
        List<RegisteredNode> eligible = new ArrayList<>();
        for (RegisteredNode n : registry.serving(model, resumeKey)) if (!exclude.contains(n.id())) eligible.add(n);
        return eligible;
    }

    private record Pick(RegisteredNode node, String reason) {}

    /** The node this policy picks, or null when capacity routing finds no headroom. */
    private Pick choose(List<RegisteredNode> eligible, String model) {
        if (eligible.isEmpty()) return null;
        return switch (policy) {
            case ROUND_ROBIN -> new Pick(eligible.get((int) Math.floorMod(turn.getAndIncrement(), (long) eligible.size())),
                    "round_robin");
            case LEAST_LOAD -> {
                List<RegisteredNode> least = best(eligible, n -> -n.running(model));
                yield new Pick(least.get(ThreadLocalRandom.current().nextInt(least.size())), "least_load");
            }
            case CAPACITY -> {
                List<RegisteredNode> most = best(eligible, n -> n.headroom(model));
                if (most.getFirst().headroom(model) <= 0) yield null;
                if (most.size() == 1) yield new Pick(most.getFirst(), "headroom");
                List<RegisteredNode> fastest = best(most, n -> (int) Math.round(1000 * n.models().get(model).sessionThroughput()));
                if (fastest.size() == 1) yield new Pick(fastest.getFirst(), "headroom_tie_measured_speed");
                most = fastest;
                // Power of two choices among the ties: two at random, the less loaded wins.
                ThreadLocalRandom r = ThreadLocalRandom.current();
                int a = r.nextInt(most.size());
                int b = (a + 1 + r.nextInt(most.size() - 1)) % most.size();
                RegisteredNode x = most.get(a), y = most.get(b);
                yield new Pick(y.running(model) < x.running(model) ? y : x, "headroom_tie_two_choices");
            }
        };
    }

    private static List<RegisteredNode> best(List<RegisteredNode> nodes, java.util.function.ToIntFunction<RegisteredNode> score) {
        int top = Integer.MIN_VALUE;
        List<RegisteredNode> out = new ArrayList<>();
        for (RegisteredNode n : nodes) {
            int s = score.applyAsInt(n);
            if (s > top) {
                top = s;
                out.clear();
            }
            if (s == top) out.add(n);
        }
        return out;
    }

    private void wake() {
        lock.lock();
        try {
            capacity.signalAll();
        } finally {
            lock.unlock();
        }
    }
}
