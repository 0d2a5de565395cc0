package dgr.node.stage;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Warms every path of a head's route (the preferred stages, and each alternate in its hop's place)
 * with a few zero boundary rows, again and again until each path has answered, and says whether the
 * route is ready: every hop has a stage that answered.
 *
 * <p>Why again: stages and their head are started together (the README's tour starts them in one
 * breath), and a head whose span loads faster than a later stage's found nothing listening. Its only
 * warm-up failed, its first client got a 503 and the stage's address was dead for the head's life.
 * Now the head answers {@code /health} with 503 until the route answered, and keeps warming a path
 * that did not (with a growing pause, at most {@link #MAX_PAUSE}), so a stage started late, or
 * started again, is taken into the route when it comes.
 */
final class RouteWarmUp implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(RouteWarmUp.class.getName());
    private static final Duration FIRST_PAUSE = Duration.ofMillis(200), MAX_PAUSE = Duration.ofSeconds(5);

    /** Opens a warm-up session {@code wire} down {@code path}, sends its zero rows and closes it. */
    interface Sender {
        void warm(String wire, List<String> path);
    }

    private final RouteSpec route;
    private final String prefix;
    private final Sender sender;
    private final List<List<String>> paths = new java.util.concurrent.CopyOnWriteArrayList<>();
    /** Per hop, alternates a tracker supplied ({@link #add}): their paths are warmed too, and they count for readiness. */
    private final Map<Integer, Set<String>> supplied = new ConcurrentHashMap<>();
    /** Released when a path is added, so a warm-up that had finished starts again. */
    private final java.util.concurrent.Semaphore added = new java.util.concurrent.Semaphore(0);
    /** Warm-up sessions not answered yet, by wire id: the path each went down. */
    private final Map<String, List<String>> pending = new ConcurrentHashMap<>();
    private final Set<String> answered = ConcurrentHashMap.newKeySet();
    private final Set<List<String>> reportedFailing = ConcurrentHashMap.newKeySet();
    private final AtomicLong sessions = new AtomicLong();
    private final Thread again;
    private volatile boolean closed;

    RouteWarmUp(RouteSpec route, String prefix, Sender sender) {
        this.route = route;
        this.prefix = prefix;
        this.sender = sender;
        Set<List<String>> all = new LinkedHashSet<>();
        all.add(route.preferred());
        for (int h = 0; h < route.hops().size(); h++) {
            for (String a : route.hops().get(h).addresses()) all.add(through(h, a));
        }
        paths.addAll(all);
        warmUnanswered();
        again = Thread.ofVirtual().name("dgr-route-warm-up").start(this::warmUntilAnswered);
    }

    private void warmUntilAnswered() {
        long pause = FIRST_PAUSE.toMillis();
        try {
            while (!closed) {
                if (everyPathAnswered()) {
                    added.acquire(); // every path answered: nothing to do until a tracker supplies another stage
                    added.drainPermits();
                    pause = FIRST_PAUSE.toMillis();
                    warmUnanswered();
                    continue;
                }
                Thread.sleep(pause); // a backoff between attempts to reach stages that are not up yet
                pause = Math.min(pause * 2, MAX_PAUSE.toMillis());
                if (!closed) warmUnanswered();
            }
        } catch (InterruptedException closing) {
            // close() ends the warm-up
        }
    }

    private void warmUnanswered() {
        for (List<String> path : paths) {
            if (answered.containsAll(path)) continue;
            String wire = Wire.WARM_PREFIX + prefix + sessions.getAndIncrement();
            pending.put(wire, path);
            try {
                sender.warm(wire, path);
            } catch (RuntimeException e) {
                pending.remove(wire);
                if (reportedFailing.add(path)) LOG.log(System.Logger.Level.INFO, "warming route path " + path + " failed: " + e + "; trying again");
            }
        }
    }

    /** Warms the path through a stage a tracker supplied for {@code hop} (the preferred stages elsewhere) until it answers. */
    void add(int hop, String address) {
        List<String> p = through(hop, address);
        supplied.computeIfAbsent(hop, k -> ConcurrentHashMap.newKeySet()).add(address);
        if (!paths.contains(p)) paths.add(p);
        added.release();
    }

    /** A supplied stage the tracker no longer offers: its path is not warmed again. */
    void remove(int hop, String address) {
        Set<String> s = supplied.get(hop);
        if (s != null) s.remove(address);
        if (!route.hops().get(hop).addresses().contains(address)) paths.remove(through(hop, address));
    }

    /** The preferred path with {@code hop}'s stage replaced by {@code address}. */
    private List<String> through(int hop, String address) {
        List<String> p = new ArrayList<>(route.preferred());
        p.set(hop, address);
        return List.copyOf(p);
    }

    /** A warm-up session's token came back: every stage on its path answered. False for other sessions. */
    boolean answered(String wire) {
        List<String> path = pending.remove(wire);
        if (path == null) return false;
        boolean was = isReady();
        answered.addAll(path);
        if (!was && isReady()) LOG.log(System.Logger.Level.INFO, "route ready: " + String.join(" -> ", path));
        return true;
    }

    /** Whether a warm-up path through {@code address} has answered. */
    boolean hasAnswered(String address) { return answered.contains(address); }

    /** A warm-up session went down a stage that failed; its path is warmed again later. */
    void failed(String wire, String reason) {
        List<String> path = pending.remove(wire);
        if (path != null && reportedFailing.add(path)) {
            LOG.log(System.Logger.Level.INFO, "route path " + String.join(" -> ", path) + " does not answer yet (" + reason
                    + "); warming it again until it does");
        }
    }

    private boolean everyPathAnswered() {
        for (List<String> p : paths) if (!answered.containsAll(p)) return false;
        return true;
    }

    private boolean isReady() { return waitingFor() == null; }

    /** Null once every hop has a stage that answered; else which hop the route still waits for. */
    String waitingFor() {
        for (int h = 0; h < route.hops().size(); h++) {
            List<String> addresses = route.hops().get(h).addresses();
            boolean any = false;
            for (String a : addresses) any |= answered.contains(a);
            for (String a : supplied.getOrDefault(h, Set.of())) any |= answered.contains(a);
            if (!any) return "a stage of hop " + (h + 1) + " (" + String.join("|", addresses) + ") to answer";
        }
        return null;
    }

    @Override
    public void close() {
        closed = true;
        again.interrupt();
    }
}
