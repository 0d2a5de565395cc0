package dgr.node.stage;

import dgr.node.stage.wire.Cancel;
import dgr.node.stage.wire.Close;
import dgr.node.stage.wire.Down;
import dgr.node.stage.wire.Open;
import dgr.node.stage.wire.Rows;
import dgr.node.stage.wire.RowsBatch;
import dgr.node.stage.wire.StageFailed;
import dgr.node.stage.wire.StageLoad;
import dgr.node.stage.wire.Token;
import dgr.node.stage.wire.Up;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;

/**
 * A stage's side of its downstream neighbours (the head's too): one {@link Link} per next-hop
 * address, each live session's route and the boundary rows sent for it ({@link KeptRows}).
 *
 * <p>When a link breaks, or its stage goes silent (no reply and no {@link Pulses pulse}: suspended or
 * stalled) or a reply misses its {@link StepClock} deadline (alive but not computing), the link is
 * dropped and the owner hears which sessions went through it. When the head moves a session to an
 * alternate, {@link #resume} opens it there and replays the kept rows, so only the dead span is
 * recomputed. Sends happen on the owner's thread; replies and failures come on gRPC's threads and the
 * watchdog's.
 */
final class Downlinks implements Link.Owner, AutoCloseable {
    private static final System.Logger LOG = System.getLogger(Downlinks.class.getName());
    /** Rows per wire entry and bytes per message: well under gRPC's limits, a prefill goes in chunks. */
    static final int MAX_ENTRY_BYTES = 256 << 10;
    private static final int MAX_MESSAGE_BYTES = 1 << 20;

    interface Listener {
        /**
         * Tokens from the last stage ({@code reply.getTokensList()}), which spent {@code reply.getComputeNanos()}
         * computing their batch and stamped when it handed them to its transport ({@code sent_nanos}, {@code clock}).
         */
        void tokens(dgr.node.stage.wire.Tokens reply);

        /** A reply came {@code nanos} after its rows were sent, the last stage's computing time taken off. */
        default void overhead(long nanos) {}

        /** The stage at {@code address} (here or further down) died or hung; these sessions went through it. */
        void failed(String address, String reason, List<String> sessions);

        /** A stage further down reported how busy it is (relayed towards the head). */
        void load(StageLoad load);
    }

    private static final class Route {
        String address;
        final KeptRows kept;

        Route(String address, int width) {
            this.address = address;
            this.kept = new KeptRows(width);
        }
    }

    private final ClusterToken token;
    private final StepClock clock;
    private final int width;
    private final int rowsPerEntry;
    private final Listener listener;
    private final Map<String, Link> links = new HashMap<>();
    private final Map<String, Route> routes = new HashMap<>();
    /** Per link, what the next {@link #flush} sends it. */
    private final Map<Link, Queued> outgoing = new HashMap<>();
    private final Thread watchdog;
    /** When the watchdog wakes next ({@link System#nanoTime}); a reply that brings a deadline before it wakes it. */
    private volatile long watchAt;
    private volatile boolean closed;
    /** The last step time per row measured on any link (0: none yet). */
    private volatile double knownNanosPerRow;

    Downlinks(ClusterToken token, StepClock clock, int width, Listener listener) {
        this.token = token;
        this.clock = clock;
        this.width = width;
        this.rowsPerEntry = Math.max(1, MAX_ENTRY_BYTES / (width * Float.BYTES));
        this.listener = listener;
        this.watchAt = System.nanoTime() + clock.floorNanos();
        this.watchdog = Thread.ofPlatform().daemon(true).name("dgr-stage-watchdog").start(this::watchLoop);
    }

    /** Opens a session on {@code address} ({@code open} already names the hops after it). */
    synchronized void open(String session, String address, Open open) {
        Route r = new Route(address, width);
        routes.put(session, r);
        link(address).send(Down.newBuilder().setOpen(open).build());
    }

    /** Opens the stream to {@code address} ahead of the first session, so its connection and classes are ready. */
    synchronized void connect(String address) { link(address); }

    /** Whether this session is routed from here (it has kept rows). */
    synchronized boolean has(String session) { return routes.containsKey(session); }

    /**
     * Keeps and queues rows {@code from..from+count-1} of a session ({@code count × width} floats at
     * {@code src[off..]}); {@code outputRow} (or -1) is the row whose token is awaited. Sent by {@link #flush}.
     */
    synchronized void send(String session, int from, float[] src, int off, int count, int outputRow, boolean replay) {
        long handedOver = System.nanoTime(); // the per-hop latency starts before the rows are encoded
        Route r = routes.get(session);
        if (r == null) throw new IllegalStateException("session " + session + " is not open downstream");
        r.kept.put(from, src, off, count);
        Link l = links.get(r.address);
        if (l == null || l.isDead()) return;
        queue(l, session, r.kept, from, count, outputRow, replay, handedOver);
    }

    /**
     * The rows queued for one link until the next {@link #flush}: the wire entries, how many rows they
     * hold, the replies they will bring, and when the first was handed over
     * ({@link System#nanoTime}: the per-hop latency's start, one stamp per message).
     */
    private static final class Queued {
        final List<Rows> entries = new ArrayList<>();
        final List<Link.Reply> awaited = new ArrayList<>();
        final long handedOver;
        int rows;

        Queued(long handedOver) { this.handedOver = handedOver; }
    }

    /** Queues kept rows {@code from..from+count-1} of a session for {@code l}; their bytes go as views of the kept ones. */
    private void queue(Link l, String session, KeptRows kept, int from, int count, int outputRow, boolean replay, long handedOver) {
        Queued q = outgoing.get(l);
        if (q == null) outgoing.put(l, q = new Queued(handedOver));
        for (int done = 0; done < count; done += rowsPerEntry) {
            int n = Math.min(rowsPerEntry, count - done);
            int out = outputRow >= done && outputRow < done + n ? outputRow - done : -1;
            q.entries.add(Rows.newBuilder().setSession(session).setFirstPosition(from + done).setCount(n).setOutputRow(out)
                    .setReplay(replay).setData(kept.wire(from + done, n)).build());
            if (out >= 0) q.awaited.add(new Link.Reply(session, from + outputRow));
        }
        q.rows += count;
    }

    /** Sends every queued row, in messages under the size limit. */
    synchronized void flush() {
        for (var e : outgoing.entrySet()) {
            Link l = e.getKey();
            Queued q = e.getValue();
            // The next stage computes these rows as one batch: every awaited reply waits behind all of them
            // (registering each with only the rows queued before it made the first ones' deadlines too short).
            if (!q.awaited.isEmpty()) {
                l.expect(q.awaited, q.rows);
                // A stage silent since before these rows were sent is due at once: the watchdog looks now,
                // not when it next wakes (up to a floor from now).
                if (l.silentAfter() - watchAt < 0) LockSupport.unpark(watchdog);
            }
            RowsBatch.Builder b = RowsBatch.newBuilder().setSentNanos(q.handedOver).setClock(HostClock.ID);
            int bytes = 0;
            for (Rows r : q.entries) {
                if (bytes > 0 && bytes + r.getData().size() > MAX_MESSAGE_BYTES) {
                    l.send(Down.newBuilder().setRows(b).build());
                    b = RowsBatch.newBuilder().setSentNanos(q.handedOver).setClock(HostClock.ID);
                    bytes = 0;
                }
                b.addRows(r);
                bytes += r.getData().size();
            }
            if (b.getRowsCount() > 0) l.send(Down.newBuilder().setRows(b).build());
        }
        outgoing.clear();
    }

    /**
     * Re-opens a session after a failover with the route in {@code open}: when its next hop is now
     * {@code address} (another stage than before), the kept rows are queued for a replay there, the row
     * at {@code pendingPosition} marked as the one whose token is awaited; otherwise the open is passed
     * on. The open goes at once, the rows with the next {@link #flush}: a failover resumes every moved
     * session first and flushes once, so the replacement gets every open before any replayed row and
     * computes the rows of all sessions in full batches, not session by session (an open ends the
     * batch being formed). Returns the rows queued for the replay.
     */
    synchronized int resume(String session, String address, Open open, int pendingPosition) {
        Route r = routes.get(session);
        if (r == null) throw new IllegalStateException("session " + session + " is not open downstream");
        Link old = links.get(r.address);
        if (old != null) old.forget(session);
        boolean moved = !address.equals(r.address) || old == null;
        r.address = address;
        Link l = link(address);
        l.send(Down.newBuilder().setOpen(open).build());
        if (moved && r.kept.size() > 0) {
            int out = pendingPosition >= 0 && pendingPosition < r.kept.size() ? pendingPosition : -1;
            queue(l, session, r.kept, 0, r.kept.size(), out, true, System.nanoTime());
            return r.kept.size();
        }
        if (pendingPosition >= 0) l.expect(List.of(new Link.Reply(session, pendingPosition)), r.kept.size());
        return 0;
    }

    synchronized void close(String session) {
        flushBeforeEnd();
        Route r = routes.remove(session);
        if (r != null) sendTo(r.address, Down.newBuilder().setClose(Close.newBuilder().setSession(session)).build());
    }

    synchronized void cancel(String session, String reason) {
        flushBeforeEnd();
        Route r = routes.remove(session);
        if (r != null) {
            sendTo(r.address, Down.newBuilder().setCancel(Cancel.newBuilder().setSession(session).setReason(reason)).build());
        }
    }

    /** A close or cancel goes at once: rows still queued (a replay) go first, so none arrives for a session ended there. */
    private void flushBeforeEnd() {
        if (!outgoing.isEmpty()) flush();
    }

    private void sendTo(String address, Down message) {
        Link l = links.get(address);
        if (l != null) l.send(message);
    }

    synchronized long keptBytes() {
        long b = 0;
        for (Route r : routes.values()) b += r.kept.bytes();
        return b;
    }

    synchronized int sessions() { return routes.size(); }

    /** Addresses of the downstream stages this stage has live streams to. */
    synchronized List<String> neighbours() {
        return links.values().stream().filter(l -> !l.isDead()).map(l -> l.address).sorted().toList();
    }

    private Link link(String address) {
        Link l = links.get(address);
        if (l == null || l.isDead()) {
            l = new Link(address, token, clock, this);
            // Every address this stage sends to serves the same span (a hop and its alternates): a
            // new link starts from the step time measured on the others, not from the cold bound.
            double known = knownNanosPerRow;
            if (known > 0) l.seed(known);
            links.put(address, l);
        }
        return l;
    }

    @Override
    public void received(Link link, Up up) {
        switch (up.getKindCase()) {
            case TOKENS -> {
                List<Token> tokens = up.getTokens().getTokensList();
                long rtt = -1;
                for (int i = 0; i < tokens.size(); i++) {
                    Token t = tokens.get(i);
                    rtt = Math.max(rtt, link.answered(new Link.Reply(t.getSession(), t.getPosition())));
                }
                if (link.measured()) knownNanosPerRow = link.knownNanosPerRow();
                // The reply changed the link's time per row, so the deadlines of its other rows: one may now
                // come before the watchdog wakes (rarely: it wakes at the earliest deadline or a floor from now).
                if (link.dueBefore(watchAt)) LockSupport.unpark(watchdog);
                long compute = up.getTokens().getComputeNanos();
                if (rtt >= 0 && compute > 0) listener.overhead(Math.max(0, rtt - compute));
                listener.tokens(up.getTokens());
            }
            case FAILED -> {
                StageFailed f = up.getFailed();
                listener.failed(f.getAddress(), f.getReason(), f.getSessionsList());
            }
            case LOAD -> listener.load(up.getLoad());
            default -> LOG.log(System.Logger.Level.WARNING, "stage " + link.address + " sent an empty reply");
        }
    }

    @Override
    public void ended(Link link, String reason) {
        drop(link, reason);
    }

    /** Declares the link's stage dead: kills the stream, tells the owner which sessions went through it. */
    private void drop(Link link, String reason) {
        List<String> affected = new ArrayList<>();
        synchronized (this) {
            if (links.get(link.address) == link) links.remove(link.address);
            outgoing.remove(link);
            for (var e : routes.entrySet()) if (e.getValue().address.equals(link.address)) affected.add(e.getKey());
        }
        link.kill();
        LOG.log(System.Logger.Level.WARNING, "stage " + link.address + " " + reason + "; " + affected.size() + " sessions affected");
        if (!affected.isEmpty()) listener.failed(link.address, reason, affected);
    }

    /**
     * Checks the deadlines when the earliest one is due, not on a fixed tick: a tick is a thread
     * wake-up, on these virtual machines a core's, every few milliseconds on a route that is otherwise
     * waiting for one row. A row sent while the watchdog sleeps cannot reach its deadline before it
     * wakes (a deadline is at least a floor after its sending, and the watchdog sleeps a floor at most);
     * a reply that brings an earlier deadline of another row wakes it ({@link #received}), and so does
     * a flush to a stage that has been silent too long already ({@link #flush}).
     */
    private void watchLoop() {
        while (!closed) {
            long now = System.nanoTime();
            // While the deadlines are read, any reply that finds rows waiting wakes the watchdog (its unpark
            // makes the park below return at once, and the deadlines are read again): a reply that came
            // in between must not be missed because the time per row it brought was not read.
            watchAt = now + Long.MAX_VALUE / 4;
            long next = watch(now);
            watchAt = next;
            long wait = next - System.nanoTime();
            // Nothing interrupts this thread on purpose; a stray interrupt left set would make every park return at once.
            Thread.interrupted();
            if (wait > 0) LockSupport.parkNanos(this, wait);
        }
    }

    /** Drops the links with a reply past its deadline; returns when the next check is due. */
    private long watch(long now) {
        // A row sent from now on is due a floor after its sending at the earliest (cold links: later still).
        long next = now + Math.min(clock.floorNanos(), clock.firstReplyNanos());
        try {
            List<Link> live;
            synchronized (this) {
                live = new ArrayList<>(links.values());
            }
            for (Link l : live) {
                Link.Sent due = l.firstDue();
                if (due == null) continue;
                long deadline = l.deadline(due), silent = l.silentAfter();
                if (now - silent > 0) {
                    drop(l, "hung: " + l.silenceReason(now));
                } else if (now - deadline > 0) {
                    drop(l, "hung: no reply within " + (deadline - due.sentNanos) / 1_000_000 + " ms (deadline from "
                            + (l.measured() ? String.format("%.2f ms per row measured, ", l.nanosPerRow(due.rowsAhead) / 1e6) : "no reply measured yet, ")
                            + due.rowsAhead + " rows ahead)");
                } else {
                    long at = silent - deadline < 0 ? silent : deadline;
                    if (at - next < 0) next = at;
                }
            }
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.ERROR, "stage watchdog failed", e);
            // the links after the one that failed went unchecked: look again soon, not a floor from now
            if (now + RETRY_NANOS - next < 0) next = now + RETRY_NANOS;
        }
        return next;
    }

    /** How soon the watchdog looks again after a check that failed part-way. */
    private static final long RETRY_NANOS = 20_000_000L;

    @Override
    public void close() {
        closed = true;
        LockSupport.unpark(watchdog);
        List<Link> all;
        synchronized (this) {
            all = new ArrayList<>(links.values());
            links.clear();
            routes.clear();
        }
        for (Link l : all) l.finish();
    }
}
