package dgr.runtime;

import dgr.engine.Batch;
import dgr.engine.Engine;
import dgr.engine.ForwardResult;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;

/**
 * A head scheduler's side of its route: the micro-batches in flight, which session awaits a token
 * from the last stage, and the session opens and closes that travel down. Scheduler thread only.
 *
 * <p>A session whose row wants output is <em>in flight</em> until its token comes back: the planner
 * leaves it out, and the head plans the next micro-batch from the other sessions (at most
 * {@code ceil(running / depth)} of them, so the running sessions form {@code depth} groups, one per
 * stage). The scheduler waits for the route only when every running session is in flight or
 * {@code depth} micro-batches are.
 */
final class HeadRoute {
    private static final System.Logger LOG = System.getLogger(HeadRoute.class.getName());
    /** Longest single wait for replies, so deadlines of waiting sessions are still checked. */
    private static final long MAX_WAIT_NANOS = 50_000_000L;

    /** One micro-batch on the route: how many of its sessions still await their token. */
    static final class Flight {
        int awaiting;
    }

    /**
     * Stands for a micro-batch for a session the route {@linkplain Downstream#holds holds} after its token
     * came: the planner leaves it out as if in flight, but it counts in no flight.
     */
    private static final Flight HELD = new Flight();

    private final Downstream downstream;
    private final Engine engine;
    private final int depth;
    private final long[] rowSessions;
    private final Map<Long, Session> open = new HashMap<>();
    /** Sessions held after their token ({@link #HELD}), asked again on every receive. */
    private final List<Session> held = new ArrayList<>();
    private int flights;
    private long waitedNanos;

    HeadRoute(Downstream downstream, Engine engine, int maxBatchTokens) {
        this.downstream = downstream;
        this.engine = engine;
        this.depth = Math.max(1, downstream.depth());
        this.rowSessions = new long[maxBatchTokens];
    }

    void open(Session s) {
        downstream.open(s.sequenceId(), s.sampler());
        open.put(s.sequenceId(), s);
    }

    /**
     * Most sessions the next micro-batch takes: the running ones split into {@code depth} groups, or
     * none while {@code depth} micro-batches are on the route.
     */
    int groupSize(int running) { return flights >= depth ? 0 : Math.max(1, (running + depth - 1) / depth); }

    /** Sends the planned batch's boundary rows down; the sessions whose row wants output are in flight from now. */
    void send(BatchPlanner planner, Batch batch, ForwardResult result) {
        for (int i = 0, row = 0; i < planner.count(); i++) {
            for (int c = 0; c < planner.chunk(i); c++) rowSessions[row++] = planner.sequenceId(i);
        }
        // With the route's depth filled by this batch only the route can bring the next rows: the engine's
        // workers park now, leaving the cores to the transport's threads carrying these rows (and to the
        // stages computing them when they share this machine), rather than spinning first.
        if (flights + 1 >= depth) rest();
        downstream.send(batch, result, rowSessions);
        // Only once sent: a send that threw leaves no session in flight (the scheduler fails them).
        Flight flight = new Flight();
        for (int i = 0; i < planner.count(); i++) {
            if (!batch.wantsOutput(planner.outputRow(i))) continue;
            planner.session(i).inFlight = flight;
            flight.awaiting++;
        }
        if (flight.awaiting > 0) flights++;
    }

    /**
     * Hands the replies that came to {@code token} and {@code lost}; waits for one when nothing can
     * be planned now (every running session in flight) or {@code depth} micro-batches are in flight.
     */
    void receive(List<Session> running, BiConsumer<Session, Integer> token, BiConsumer<Session, String> lost) {
        release();
        boolean plannable = false;
        for (int i = 0; i < running.size() && !plannable; i++) plannable = running.get(i).inFlight == null;
        // Held sessions wait too (a wait ends at the latest after MAX_WAIT_NANOS, when their holds are asked again).
        boolean wait = (flights > 0 || !held.isEmpty()) && (!plannable || flights >= depth);
        if (wait) rest();  // as in send: only the route can bring the next rows
        long t0 = System.nanoTime();
        downstream.receive(wait ? MAX_WAIT_NANOS : 0, new Downstream.Replies() {
            @Override
            public void token(long sequenceId, int t) {
                Session s = open.get(sequenceId);
                // Ended meanwhile, or a repeat (also of a held session's token: held is not in flight).
                if (s == null || s.inFlight == null || s.inFlight == HELD) return;
                land(s);
                token.accept(s, t);
                if (open.containsKey(sequenceId) && downstream.holds(sequenceId)) {  // still open: the token did not end it
                    s.inFlight = HELD;
                    held.add(s);
                }
            }

            @Override
            public void lost(long sequenceId, String why) {
                Session s = open.get(sequenceId);
                if (s != null) lost.accept(s, why);
            }
        });
        if (wait) waitedNanos += System.nanoTime() - t0;
    }

    /**
     * Parks the engine's idle workers, unless an event (a reply, a failure) is already waiting; wakes
     * them again when one came meanwhile: its wake (on the transport's thread, as it came) preceded
     * this rest, and the next forward pass follows it.
     */
    private void rest() {
        if (downstream.replied()) return;
        engine.rest();
        if (downstream.replied()) engine.wake();
    }

    private void land(Session s) {
        Flight f = s.inFlight;
        s.inFlight = null;
        if (f == HELD) held.remove(s);
        else if (f != null && --f.awaiting == 0) flights--;
    }

    /** Makes the held sessions that the route no longer holds plannable again. */
    private void release() {
        for (int i = held.size() - 1; i >= 0; i--) {
            Session s = held.get(i);
            if (downstream.holds(s.sequenceId())) continue;
            s.inFlight = null;
            held.remove(i);
        }
    }

    void wake() { downstream.wake(); }

    /** Micro-batches on the route now. */
    int flights() { return flights; }

    /** Time the scheduler waited for the route with nothing else to plan. */
    long waitedNanos() { return waitedNanos; }

    /**
     * Frees the session down the route and takes its recomputed count into its accounting; a failure
     * here is logged, never thrown into the loop.
     */
    void close(Session s, Phase phase, String message) {
        land(s);
        open.remove(s.sequenceId());
        try {
            s.recomputedTokens = downstream.recomputedTokens(s.sequenceId());
            downstream.close(s.sequenceId(), phase, message);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "closing session " + s.sequenceId() + " down the route failed", e);
        }
    }
}
