package dgr.tracker.routing;

import static org.assertj.core.api.Assertions.assertThat;

import dgr.tracker.registry.Backend;
import dgr.tracker.registry.ModelCapacity;
import dgr.tracker.registry.NodeRegistry;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class RouterTest {
    private static final String M = "m";
    /** These tests are about routing, not liveness: a node reported once must not go stale while a loaded CI machine
     *  runs the test (a 3 s timeout expired both nodes mid-test under load and the held requests saw NoNode). */
    private static final Duration NO_EXPIRY = Duration.ofHours(1);

    private static NodeRegistry registry(int bigMax, int smallMax) {
        NodeRegistry r = new NodeRegistry(NO_EXPIRY, Clock.systemUTC());
        r.report("big", Backend.DGR, URI.create("http://127.0.0.1:1/"), null, Map.of(M, cap(bigMax)));
        r.report("small", Backend.DGR, URI.create("http://127.0.0.1:2/"), null, Map.of(M, cap(smallMax)));
        return r;
    }

    private static ModelCapacity cap(int max) {
        return new ModelCapacity(M, "recipe", max, true, "saturation", 0, 0, 4096, "java-q8/1", 0, 0);
    }

    private static String node(Decision d) {
        return ((Decision.Routed) d).lease().node().id();
    }

    @Test
    void capacityRoutingFillsTheNodeWithMostHeadroomAndRefusesWhenEveryNodeIsAtItsRecommendation() throws Exception {
        Router router = new Router(registry(4, 1), RoutingPolicy.CAPACITY, Duration.ZERO, 8);
        List<String> order = new ArrayList<>();
        for (int i = 0; i < 5; i++) order.add(node(router.route(M, null, Set.of())));
        // headroom big 4,3,2 then 1 = small's 1: a tie, the less loaded of the two (small) wins; then big's last slot.
        assertThat(order).containsExactly("big", "big", "big", "small", "big");
        assertThat(router.route(M, null, Set.of())).isInstanceOf(Decision.Full.class);
    }

    @Test
    void aResumedStreamNeverWaitsForHeadroom() throws Exception {
        Router router = new Router(registry(1, 1), RoutingPolicy.CAPACITY, Duration.ofSeconds(30), 8);
        router.route(M, null, Set.of());
        router.route(M, null, Set.of());
        Decision d = router.route(M, "recipe java-q8/1", Set.of("small"));
        assertThat(node(d)).isEqualTo("big");
        assertThat(((Decision.Routed) d).lease().reason()).isEqualTo("resume_over_capacity");
        assertThat(((Decision.Routed) d).waitedNanos()).isLessThan(TimeUnit.SECONDS.toNanos(5));
    }

    /** Two nodes as measure.sh makes them: recommended 1 each, one about 7x faster (tokens/s per session, in total). */
    private static NodeRegistry fastAndSlow() {
        NodeRegistry r = new NodeRegistry(NO_EXPIRY, Clock.systemUTC());
        r.report("slow", Backend.DGR, URI.create("http://127.0.0.1:1/"), null,
                Map.of(M, new ModelCapacity(M, "recipe", 1, true, "saturation", 0, 0, 4096, "java-simd/1", 7.0, 4.8)));
        r.report("fast", Backend.DGR, URI.create("http://127.0.0.1:2/"), null,
                Map.of(M, new ModelCapacity(M, "recipe", 1, true, "saturation", 0, 0, 4096, "java-q8/1", 49.0, 36.2)));
        return r;
    }

    private static CompletableFuture<Decision> routeAsync(Router router) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return router.route(M, null, Set.of());
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        }, r -> Thread.ofVirtual().start(r)); // one thread each: the common pool may have a single worker
    }

    @Test
    void aRequestWaitsForABusyFastNodeWhenThatIsSoonerThanStartingOnAnIdleSlowOne() throws Exception {
        Router router = new Router(fastAndSlow(), RoutingPolicy.CAPACITY, Duration.ofSeconds(20), 8);
        Lease first = ((Decision.Routed) router.route(M, null, Set.of())).lease();
        assertThat(first.node().id()).as("idle, the faster node").isEqualTo("fast");
        CompletableFuture<Decision> second = routeAsync(router);
        dgr.tracker.cluster.Await.until("the second request waits for the fast node", Duration.ofSeconds(10),
                () -> router.queued() == 1);
        assertThat(second).as("the slow node has headroom, but one session on the fast node ends sooner").isNotDone();
        first.close();
        Lease next = ((Decision.Routed) second.get(10, TimeUnit.SECONDS)).lease();
        assertThat(next.node().id()).isEqualTo("fast");
        assertThat(next.reason()).isEqualTo("held_for_faster");
        next.close();
    }

    @Test
    void theSlowNodeTakesARequestOnceTheQueueForTheFastNodeIsLongerThanItsOwnDelay() throws Exception {
        // Before any observation (first token 8 token times, a session 32): fast q·32/49 + 8/49 s, slow idle 8/7 s.
        // q = 1 (0.82 s) waits, q = 2 (1.47 s) starts on slow.
        Router router = new Router(fastAndSlow(), RoutingPolicy.CAPACITY, Duration.ofSeconds(20), 8);
        Lease first = ((Decision.Routed) router.route(M, null, Set.of())).lease();
        List<CompletableFuture<Decision>> held = new ArrayList<>();
        for (int i = 1; i <= 1; i++) {
            held.add(routeAsync(router));
            int n = i;
            dgr.tracker.cluster.Await.until(n + " requests wait", Duration.ofSeconds(10), () -> router.queued() == n);
        }
        Decision fifth = router.route(M, null, Set.of());
        assertThat(node(fifth)).isEqualTo("slow");
        ((Decision.Routed) fifth).lease().close();
        first.close();
        for (CompletableFuture<Decision> f : held) {
            Lease l = ((Decision.Routed) f.get(10, TimeUnit.SECONDS)).lease();
            assertThat(l.node().id()).as("the held requests: first come, first served, on the fast node or the freed slow one")
                    .isIn("fast", "slow");
            l.close();
        }
        assertThat(router.queued()).isZero();
    }

    @Test
    void blindPoliciesIgnoreTheRecommendation() throws Exception {
        Router rr = new Router(registry(4, 1), RoutingPolicy.ROUND_ROBIN, Duration.ZERO, 8);
        List<String> order = new ArrayList<>();
        for (int i = 0; i < 6; i++) order.add(node(rr.route(M, null, Set.of())));
        assertThat(order).containsExactly("big", "small", "big", "small", "big", "small");
        Router least = new Router(registry(4, 1), RoutingPolicy.LEAST_LOAD, Duration.ZERO, 8);
        int small = 0;
        for (int i = 0; i < 6; i++) if (node(least.route(M, null, Set.of())).equals("small")) small++;
        assertThat(small).as("least-load splits evenly, blind to capacity").isEqualTo(3);
    }

    @Test
    void aQueuedRequestIsRoutedAsSoonAsALeaseEnds() throws Exception {
        Router router = new Router(registry(1, 1), RoutingPolicy.CAPACITY, Duration.ofSeconds(20), 8);
        Lease a = ((Decision.Routed) router.route(M, null, Set.of())).lease();
        Lease b = ((Decision.Routed) router.route(M, null, Set.of())).lease();
        CompletableFuture<Decision> waiting = CompletableFuture.supplyAsync(() -> {
            try {
                return router.route(M, null, Set.of());
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        dgr.tracker.cluster.Await.until("the request queued", Duration.ofSeconds(10), () -> router.queued() == 1);
        b.close();
        Decision d = waiting.get(10, TimeUnit.SECONDS);
        assertThat(d).isInstanceOf(Decision.Routed.class);
        assertThat(((Decision.Routed) d).lease().reason()).isEqualTo("queued_headroom");
        assertThat(((Decision.Routed) d).lease().node().id()).isEqualTo(b.node().id());
        assertThat(router.queued()).isZero();
        a.close();
    }

    @Test
    void theQueueIsBoundedAndItsWaitIsBounded() throws Exception {
        Router router = new Router(registry(1, 1), RoutingPolicy.CAPACITY, Duration.ofMillis(100), 0);
        router.route(M, null, Set.of());
        router.route(M, null, Set.of());
        Decision.Full full = (Decision.Full) router.route(M, null, Set.of());
        assertThat(full.queueFull()).as("no queue: refused at once").isTrue();
        Router waits = new Router(registry(1, 1), RoutingPolicy.CAPACITY, Duration.ofMillis(100), 4);
        waits.route(M, null, Set.of());
        waits.route(M, null, Set.of());
        Decision.Full timedOut = (Decision.Full) waits.route(M, null, Set.of());
        assertThat(timedOut.queueFull()).isFalse();
        assertThat(timedOut.waitedNanos()).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(100));
    }

    @Test
    void aResumedStreamOnlyGoesToANodeWithTheSameRecipeAndEngineAndNeverBackToOneThatFailed() throws Exception {
        NodeRegistry r = registry(4, 4);
        r.report("other-recipe", Backend.DGR, URI.create("http://127.0.0.1:3/"), null,
                Map.of(M, new ModelCapacity(M, "another", 64, true, "saturation", 0, 0, 4096, "java-q8/1", 0, 0)));
        r.report("other-engine", Backend.DGR, URI.create("http://127.0.0.1:4/"), null,
                Map.of(M, new ModelCapacity(M, "recipe", 32, true, "saturation", 0, 0, 4096, "java-simd/1", 0, 0)));
        Router router = new Router(r, RoutingPolicy.CAPACITY, Duration.ZERO, 8);
        assertThat(node(router.route(M, null, Set.of()))).isEqualTo("other-recipe");
        assertThat(node(router.route(M, "recipe java-q8/1", Set.of("big")))).isEqualTo("small");
        assertThat(router.route(M, "recipe java-q8/1", Set.of("big", "small"))).isInstanceOf(Decision.NoNode.class);
    }

    @Test
    void sessionsTheTrackerDidNotLeaseCountAgainstHeadroomOnlyOnceTwoReportsInARowShowThem() throws Exception {
        NodeRegistry r = new NodeRegistry(NO_EXPIRY, Clock.systemUTC());
        URI url = URI.create("http://127.0.0.1:1/");
        ModelCapacity busy = new ModelCapacity(M, "recipe", 1, true, "saturation", 1, 0, 4096, "java-q8/1", 0, 0);
        r.report("n", Backend.DGR, url, null, Map.of(M, cap(1)));
        // One report still counting a session (a heartbeat sent just before a leased session ended): the slot stays free.
        r.report("n", Backend.DGR, url, null, Map.of(M, busy));
        assertThat(new Router(r, RoutingPolicy.CAPACITY, Duration.ZERO, 8).route(M, null, Set.of()))
                .isInstanceOf(Decision.Routed.class);
        // That lease is released; two reports in a row now show a session nobody here leased: the node is full.
        NodeRegistry r2 = new NodeRegistry(NO_EXPIRY, Clock.systemUTC());
        r2.report("n", Backend.DGR, url, null, Map.of(M, busy));
        r2.report("n", Backend.DGR, url, null, Map.of(M, busy));
        assertThat(new Router(r2, RoutingPolicy.CAPACITY, Duration.ZERO, 8).route(M, null, Set.of()))
                .isInstanceOf(Decision.Full.class);
    }

    @Test
    void whatTheTrackerSawOfEachNodesFirstTokensAndSessionsDecidesWhetherARequestWaitsForABusyNode() throws Exception {
        NodeRegistry r = fastAndSlow();
        RegisteredNodes.seen(r, "fast", 0.05, 0.50);
        // No queue (maxQueued 0): a request that would wait is refused at once, so each decision shows synchronously.
        Router router = new Router(r, RoutingPolicy.CAPACITY, Duration.ofSeconds(30), 0);
        Lease first = ((Decision.Routed) router.route(M, null, Set.of())).lease();
        assertThat(first.node().id()).isEqualTo("fast");
        // The slow node's first tokens came in 0.2 s: sooner than 0.5 s for the fast node's slot + 0.05 s.
        RegisteredNodes.seen(r, "slow", 0.20, 5.0);
        assertThat(node(router.route(M, null, Set.of()))).isEqualTo("slow");
        // Its first tokens came in 2 s (slower than the prior 8/7 s): the wait for the fast node is sooner.
        NodeRegistry r2 = fastAndSlow();
        RegisteredNodes.seen(r2, "fast", 0.05, 0.50);
        RegisteredNodes.seen(r2, "slow", 2.0, 5.0);
        Router router2 = new Router(r2, RoutingPolicy.CAPACITY, Duration.ofSeconds(30), 0);
        router2.route(M, null, Set.of());
        assertThat(router2.route(M, null, Set.of())).isInstanceOfSatisfying(Decision.Full.class,
                f -> assertThat(f.queueFull()).as("it would wait for the fast node").isTrue());
    }

    @Test
    void onlyALeaseWhoseNodeStreamedTellsRoutingItsFirstTokenAndSessionTimes() throws Exception {
        NodeRegistry r = registry(1, 1);
        Router router = new Router(r, RoutingPolicy.CAPACITY, Duration.ZERO, 8);
        Lease refused = ((Decision.Routed) router.route(M, null, Set.of())).lease();
        refused.close(); // a node that refused or failed before its first chunk says nothing of its speed
        assertThat(refused.node().times(M).firstTokenSeconds()).isNaN();
        assertThat(refused.node().times(M).sessionSeconds()).isNaN();
        Lease served = ((Decision.Routed) router.route(M, null, Set.of())).lease();
        served.firstToken();
        served.firstToken(); // once per lease
        served.close();
        var seen = served.node().times(M);
        assertThat(seen.firstTokenSeconds()).isNotNaN().isLessThanOrEqualTo(seen.sessionSeconds());
    }
}
