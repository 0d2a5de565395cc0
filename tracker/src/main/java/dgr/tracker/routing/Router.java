package dgr.tracker.routing;

import dgr.tracker.registry.NodeRegistry;
import dgr.tracker.registry.RegisteredNode;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.ToIntBiFunction;

/**
 * Chooses the node for one request, from the healthy nodes serving its model (and recipe, for a
 * resumed stream), under the configured {@link RoutingPolicy}.
 *
 * <p>Capacity routing (docs/tracker.md, "Routing"): a node can take a session while its headroom
 * (recommended_max_concurrency − running) is positive. Among the eligible nodes the request goes where
 * it is expected to get its first token soonest ({@link ExpectedDelay}): on a node with headroom after the
 * node's time to first token; on a full node after the sessions ahead of it end, then that. So a request
 * waits for a busy fast node while that is sooner than a first token from an idle slow one; ties go to the
 * most headroom, then to the less loaded of two
 * picked at random (power of two choices). Waiting requests are served first come, first served, in a
 * bounded queue ({@code maxQueued} requests, {@code maxQueueWait} each), and each one waiting counts
 * ahead of the next for the node it waits for. When the wait runs out the request takes any node with
 * headroom, else gets {@link Decision.Full} (HTTP 429 with Retry-After). Choosing and counting the lease
 * happen under one lock, so two requests never both take a node's last slot.
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
    /** Capacity routing's requests not yet placed, first come first served. */
    private final ArrayDeque<Ticket> waiting = new ArrayDeque<>();

    public Router(NodeRegistry registry, RoutingPolicy policy, Duration maxQueueWait, int maxQueued) {
        this.registry = registry;
        this.policy = policy;
        this.maxQueueWaitNanos = maxQueueWait.toNanos();
        this.maxQueued = maxQueued;
        registry.onCapacityChange(this::wake);
    }

    public RoutingPolicy policy() { return policy; }

    /** Requests now waiting for a node. */
    public int queued() {
        lock.lock();
        try {
            return waiting.size();
        } finally {
            lock.unlock();
        }
    }

    /** One request waiting for capacity routing to place it. */
    private static final class Ticket {
        final String model;
        final Set<String> exclude;
        final long start;
        Decision decision;
        /** Passes in which it waited although some eligible node had headroom (a faster one was expected sooner). */
        boolean heldForFaster;
        boolean waited;

        Ticket(String model, Set<String> exclude, long start) {
            this.model = model;
            this.exclude = exclude;
            this.start = start;
        }
    }

    /**
     * Routes a request for {@code model}; with {@code resumeKey} only nodes serving that recipe on that
     * engine (a resumed stream); never one of {@code exclude} (nodes that already failed this request).
     * A resumed stream never waits: its client is already being served, so it goes to the eligible node
     * where its next token is expected soonest even when that node is at its recommendation, and that node's
     * scheduler queues it.
     */
    public Decision route(String model, String resumeKey, Set<String> exclude) throws InterruptedException {
        long start = System.nanoTime();
        lock.lockInterruptibly();
        try {
            if (policy != RoutingPolicy.CAPACITY || resumeKey != null) {
                List<RegisteredNode> eligible = eligibleOf(model, resumeKey, exclude);
                if (eligible.isEmpty()) return noNode(model);
                Pick pick = resumeKey != null ? resume(eligible, model) : blind(eligible, model);
                return new Decision.Routed(new Lease(registry, pick.node, model, pick.reason), System.nanoTime() - start);
            }
            Ticket t = new Ticket(model, Set.copyOf(exclude), start);
            waiting.addLast(t);
            dispatch();
            if (t.decision == null && waiting.size() > maxQueued) {
                waiting.remove(t);
                return new Decision.Full(model, System.nanoTime() - start, true);
            }
            try {
                while (t.decision == null) {
                    long left = maxQueueWaitNanos - (System.nanoTime() - start);
                    if (left <= 0) {
                        waiting.remove(t);
                        return lastChance(t);
                    }
                    // Woken by a lease ending or a report; the cap re-checks heartbeats that lapse meanwhile.
                    capacity.awaitNanos(Math.min(left, TimeUnit.MILLISECONDS.toNanos(250)));
                    dispatch();
                }
            } catch (InterruptedException e) {
                if (!waiting.remove(t) && t.decision instanceof Decision.Routed r) r.lease().close();
                throw e;
            }
            return t.decision;
        } finally {
            lock.unlock();
        }
    }

    private Decision noNode(String model) {
        return new Decision.NoNode(model, registry.all().stream().anyMatch(n -> n.models().containsKey(model)));
    }

    /**
     * Places the waiting requests in arrival order: each goes to the node where it is expected to get its
     * first token soonest, counting the requests before it that wait for the same node; it is routed when that node
     * has headroom and keeps waiting otherwise. Runs under the lock.
     */
    private void dispatch() {
        if (waiting.isEmpty()) return;
        // One pass reads each node's running sessions once. Lease.close and reports change them outside
        // this lock; read live, a slot freed mid-pass was refused to an earlier request and given to a
        // later one (first come, first served broken). A change mid-pass is seen by the next pass, which
        // the change's wake() runs.
        Map<String, Integer> running = new HashMap<>();
        ToIntBiFunction<RegisteredNode, String> runs = (n, m) -> running.computeIfAbsent(key(n, m), k -> n.running(m));
        Map<String, Integer> ahead = new HashMap<>();
        Map<String, double[]> times = new HashMap<>(); // and each node's service times (ExpectedDelay)
        for (Iterator<Ticket> it = waiting.iterator(); it.hasNext(); ) {
            Ticket t = it.next();
            List<RegisteredNode> eligible = eligibleOf(t.model, null, t.exclude);
            if (eligible.isEmpty()) {
                t.decision = noNode(t.model);
                it.remove();
                continue;
            }
            ExpectedDelay delay = ExpectedDelay.of(eligible, t.model, times);
            List<RegisteredNode> soonest = new ArrayList<>();
            double best = Double.MAX_VALUE;
            for (RegisteredNode n : eligible) {
                double d = delay.of(n, runs.applyAsInt(n, t.model), ahead.getOrDefault(key(n, t.model), 0));
                if (d < best - ExpectedDelay.EPSILON) {
                    best = d;
                    soonest.clear();
                }
                if (Math.abs(d - best) <= ExpectedDelay.EPSILON) soonest.add(n);
            }
            Pick pick = tieBreak(soonest, t.model, runs);
            if (headroom(pick.node, t.model, runs) > 0) {
                String reason = t.heldForFaster ? "held_for_faster" : t.waited ? "queued_" + pick.reason : pick.reason;
                t.decision = new Decision.Routed(new Lease(registry, pick.node, t.model, reason), System.nanoTime() - t.start);
                running.merge(key(pick.node, t.model), 1, Integer::sum);
                it.remove();
            } else {
                ahead.merge(key(pick.node, t.model), 1, Integer::sum);
                t.waited = true;
                for (RegisteredNode n : eligible) if (headroom(n, t.model, runs) > 0) t.heldForFaster = true;
            }
        }
    }

    /** Recommended concurrency minus running sessions, as counted by {@code runs}. */
    private static int headroom(RegisteredNode n, String model, ToIntBiFunction<RegisteredNode, String> runs) {
        var m = n.models().get(model); // null when a report mid-pass dropped the model
        return m == null ? 0 : m.recommendedMaxConcurrency() - runs.applyAsInt(n, model);
    }

    /** The queue wait ran out: any node with headroom rather than a refusal. */
    private Decision lastChance(Ticket t) {
        List<RegisteredNode> eligible = eligibleOf(t.model, null, t.exclude);
        if (eligible.isEmpty()) return noNode(t.model);
        List<RegisteredNode> free = best(eligible, n -> n.headroom(t.model));
        if (free.getFirst().headroom(t.model) <= 0) return new Decision.Full(t.model, System.nanoTime() - t.start, false);
        Pick pick = tieBreak(free, t.model, RegisteredNode::running);
        return new Decision.Routed(new Lease(registry, pick.node, t.model, "queue_wait_spent"), System.nanoTime() - t.start);
    }

    /** A node and model as one map key (the dispatch pass's counts, and {@link ExpectedDelay}'s times). */
    static String key(RegisteredNode n, String model) { return n.id() + '\0' + model; }

    private List<RegisteredNode> eligibleOf(String model, String resumeKey, Set<String> exclude) {
        List<RegisteredNode> eligible = new ArrayList<>();
        for (RegisteredNode n : registry.serving(model, resumeKey)) if (!exclude.contains(n.id())) eligible.add(n);
        return eligible;
    }

    private record Pick(RegisteredNode node, String reason) {}

    /** Among nodes expected equally soon: the most headroom, then the less loaded of two at random. */
    private static Pick tieBreak(List<RegisteredNode> tied, String model, ToIntBiFunction<RegisteredNode, String> runs) {
        List<RegisteredNode> most = best(tied, n -> headroom(n, model, runs));
        if (most.size() == 1) return new Pick(most.getFirst(), "headroom");
        ThreadLocalRandom r = ThreadLocalRandom.current();
        int a = r.nextInt(most.size());
        int b = (a + 1 + r.nextInt(most.size() - 1)) % most.size();
        RegisteredNode x = most.get(a), y = most.get(b);
        return new Pick(runs.applyAsInt(y, model) < runs.applyAsInt(x, model) ? y : x, "headroom_tie_two_choices");
    }

    /** A resumed stream: where its next token is expected soonest, headroom or not. */
    private static Pick resume(List<RegisteredNode> eligible, String model) {
        ExpectedDelay delay = ExpectedDelay.of(eligible, model);
        RegisteredNode best = null;
        double d = Double.MAX_VALUE;
        for (RegisteredNode n : eligible) {
            double e = delay.of(n, 0);
            if (e < d - ExpectedDelay.EPSILON || (Math.abs(e - d) <= ExpectedDelay.EPSILON && n.headroom(model) > best.headroom(model))) {
                best = n;
                d = e;
            }
        }
        return new Pick(best, best.headroom(model) > 0 ? "resume_headroom" : "resume_over_capacity");
    }

    /** The node a blind policy picks. */
    private Pick blind(List<RegisteredNode> eligible, String model) {
        if (policy == RoutingPolicy.ROUND_ROBIN) {
            return new Pick(eligible.get((int) Math.floorMod(turn.getAndIncrement(), (long) eligible.size())), "round_robin");
        }
        List<RegisteredNode> least = best(eligible, n -> -n.running(model));
        return new Pick(least.get(ThreadLocalRandom.current().nextInt(least.size())), "least_load");
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

    /** Capacity may have grown (a lease ended, a report arrived): place what waits, wake the waiters. */
    private void wake() {
        lock.lock();
        try {
            dispatch();
            capacity.signalAll();
        } finally {
            lock.unlock();
        }
    }
}
