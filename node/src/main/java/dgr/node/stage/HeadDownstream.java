package dgr.node.stage;

import dgr.engine.Batch;
import dgr.engine.Engine;
import dgr.engine.ForwardResult;
import dgr.engine.sampler.LogitBias;
import dgr.engine.sampler.SamplerConfig;
import dgr.node.stage.wire.Open;
import dgr.node.stage.wire.Token;
import dgr.runtime.Downstream;
import dgr.runtime.Phase;
import dgr.runtime.RouteUnavailableException;
import dgr.engine.sampler.TokenSampler;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

/**
 * The head's route: opens each session on the stages after its span, sends its boundary rows down
 * without waiting, and hands the scheduler the last stage's tokens as they come, so up to
 * {@link #depth()} micro-batches of different sessions are on the route at once. When a stage dies
 * or hangs it moves the sessions routed through it to the hop's next alternate (re-opening them down
 * the new route, the stage before the dead one replaying its kept rows), so the client sees only a
 * pause; with no alternate left those sessions come back lost, and end with a 503.
 */
public final class HeadDownstream implements Downstream, Downlinks.Listener, AutoCloseable {
    private static final System.Logger LOG = System.getLogger(HeadDownstream.class.getName());

    private sealed interface Event {}
    /** {@code sent}: when the last stage handed them to its transport, on this process's clock, or {@link HostClock#NO_STAMP}. */
    private record Tokens(List<Token> tokens, long sent) implements Event {}
    private record Failed(String address, String reason, long epochMillis, long nanos) implements Event {}
    private record Wake() implements Event {}
    private record Closing() implements Event {}
    private static final Wake WAKE = new Wake();
    /** Zero rows each warm-up session sends. */
    private static final int WARM_ROWS = 8;

    private static final class Head {
        final long sequenceId;
        final String wire;
        final SamplerConfig sampler;
        final LogitBias bias;
        final List<String> hops;
        final List<Integer> generated = new ArrayList<>();
        int pendingPosition = -1;
        /** Positions whose rows went down so far, and those a replacement computed again. */
        int sent, recomputed;
        boolean lost;
        /** The micro-batch whose token this session awaits: its count of sessions still awaiting. */
        int[] flight;
        /** The failover that moved this session, until its next token comes. */
        FailoverPhases recovery;
        /** After that token: the failover whose other moved sessions this one waits for ({@link #holds}), and since when. */
        FailoverPhases heldBy;
        long heldSince;

        Head(long sequenceId, String wire, SamplerConfig sampler, LogitBias bias, List<String> hops) {
            this.sequenceId = sequenceId;
            this.wire = wire;
            this.sampler = sampler;
            this.bias = bias;
            this.hops = hops;
        }
    }

    private final RouteSpec route;
    /** The head's engine, whose rested workers a token reply wakes ahead of the next forward pass. */
    private final Engine engine;
    private final int depth;
    private final Downlinks links;
    private final String modelRecipeId, schemaId, prefix;
    private final int firstLayerAfter;
    /** Addresses declared dead, with when ({@link System#nanoTime}); see {@link #choose}. */
    private final Map<String, Long> dead = new ConcurrentHashMap<>();
    /**
     * Longest a moved session that has its next token waits for the failover's other moved sessions before its
     * next row ({@link #holds}): bounds what a slow replay costs the sessions that came back first.
     */
    private static final long HOLD_NANOS = TimeUnit.SECONDS.toNanos(1);
    /** A hop whose every stage is dead tries the one dead longest again after this: it may have been started again. */
    private static final long RETRY_DEAD_NANOS = TimeUnit.SECONDS.toNanos(2);
    private final RouteWarmUp warm;
    /** Per hop, the alternates a tracker supplied ({@link TrackerAlternates}), tried after the hop's own; replaced whole. */
    private final List<List<String>> supplied;
    private final float[] warmRows;
    private final LinkedBlockingQueue<Event> events = new LinkedBlockingQueue<>();
    private final Map<Long, Head> sessions = new HashMap<>();
    private final Map<String, Head> byWire = new HashMap<>();
    private final List<Event> drained = new ArrayList<>();
    private volatile boolean closed;
    private volatile long recovered, recomputedTotal;
    /** Micro-batches on the route now, and the most there were at once. */
    private volatile int flights, peakFlights;
    private final long startedNanos = System.nanoTime();
    private final LongAdder waitedNanos = new LongAdder();
    private final RouteLoad load = new RouteLoad();
    private final RecentNanos overheads = new RecentNanos(1024);
    /** A token's way back: from the last stage's hand-off to the head's scheduler taking it (same clock only). */
    private final RecentNanos tokenTransits = new RecentNanos(1024);

    public HeadDownstream(Engine head, RouteSpec route, ClusterToken token, StepClock clock) {
        this(head, route, token, clock, 0);
    }

    /**
     * @param depth micro-batches kept on the route at once; 0: one per stage, so every stage computes
     *              at once (1 suits stages that share one machine's cores and each use all of them)
     */
    public HeadDownstream(Engine head, RouteSpec route, ClusterToken token, StepClock clock, int depth) {
        if (depth < 0) throw new IllegalArgumentException("route depth must be >= 0 (0: one micro-batch per stage), got " + depth);
        this.route = route;
        this.engine = head;
        this.depth = depth == 0 ? route.hops().size() + 1 : depth;
        this.modelRecipeId = Wire.modelRecipeId(head);
        this.schemaId = head.boundarySchema().id();
        this.firstLayerAfter = head.recipe().endLayer();
        this.links = new Downlinks(token, clock, head.boundarySchema().rowWidth(), this);
        this.prefix = HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextLong()) + "-";
        this.warmRows = new float[WARM_ROWS * head.boundarySchema().rowWidth()];
        this.supplied = new java.util.concurrent.CopyOnWriteArrayList<>(java.util.Collections.nCopies(route.hops().size(), List.<String>of()));
        this.warm = new RouteWarmUp(route, prefix, this::warm);
    }

    /**
     * Sets the alternates a tracker offers for hop {@code hop} (0: the first stage after the head), most
     * headroom first; addresses the hop already names on {@code --route} are left out, as they come first.
     * A stage offered anew is warmed like the route's own, and one the head had found dead is taken back (a
     * tracker offers only stages whose heartbeat is live); one no longer offered is not chosen again.
     */
    public synchronized void supply(int hop, List<String> addresses) {
        if (closed) return;
        List<String> named = route.hops().get(hop).addresses();
        List<String> fresh = addresses.stream().filter(a -> !named.contains(a)).distinct().toList();
        List<String> before = supplied.get(hop);
        if (fresh.equals(before)) return;
        supplied.set(hop, fresh);
        for (String a : before) if (!fresh.contains(a)) warm.remove(hop, a);
        for (String a : fresh) {
            if (before.contains(a)) continue;
            dead.remove(a);
            warm.add(hop, a);
        }
        // Logged when the set changes, not when only the tracker's order by headroom does.
        if (!new java.util.HashSet<>(fresh).equals(new java.util.HashSet<>(before))) {
            LOG.log(System.Logger.Level.INFO, "hop " + (hop + 1) + ": alternates from the tracker " + fresh);
        }
    }

    /** The alternates a tracker supplied for hop {@code hop}, after those of {@code --route}. */
    public List<String> supplied(int hop) { return supplied.get(hop); }

    /** A hop's stages in the order they are tried: its {@code --route} addresses, then the tracker's. */
    private List<String> addresses(int hop) {
        List<String> more = supplied.get(hop);
        List<String> named = route.hops().get(hop).addresses();
        if (more.isEmpty()) return named;
        List<String> all = new ArrayList<>(named);
        all.addAll(more);
        return all;
    }

    /**
     * Sends a few zero boundary rows down one path of the route: the stream is open, every stage's
     * rows path has run, and every link has measured a step time before the first client, so an
     * alternate taking over is warm and a hung stage is detected from a measured deadline. The
     * session is closed when the last stage's token comes back (a stage in the middle relays a token
     * only for a session still open), which says the path answered ({@link RouteWarmUp}).
     */
    private void warm(String wire, List<String> path) {
        Head w = new Head(-1, wire, SamplerConfig.greedy(), LogitBias.none(), path);
        links.open(w.wire, path.getFirst(), open(w, false));
        links.send(w.wire, 0, warmRows, 0, WARM_ROWS, WARM_ROWS - 1, false);
        links.flush();
    }

    /** Null once every hop of the route has a stage that answered; else what the head waits for. */
    public String waitingFor() { return warm.waitingFor(); }

    @Override
    public int depth() { return depth; }

    @Override
    public void open(long sequenceId, TokenSampler sampler) {
        SamplerConfig config = sampler.portableConfig();
        if (config == null) throw new IllegalArgumentException("this session's sampler has made draws already and cannot travel to the route's last stage");
        List<String> hops = new ArrayList<>();
        for (int h = 0; h < route.hops().size(); h++) hops.add(chooseAnswered(h));
        Head s = new Head(sequenceId, prefix + sequenceId, config, sampler.portableBias(), hops);
        links.open(s.wire, hops.getFirst(), open(s, false));
        sessions.put(sequenceId, s);
        byWire.put(s.wire, s);
    }

    private Open open(Head s, boolean resume) {
        Open.Builder b = Open.newBuilder().setSession(s.wire).setProtocol(Wire.PROTOCOL).setModelRecipeId(modelRecipeId)
                .setFirstLayer(firstLayerAfter).setBoundarySchemaId(schemaId).addAllNextHops(s.hops.subList(1, s.hops.size()))
                .setSampling(Wire.sampling(s.sampler, s.bias)).setResume(resume).setPendingPosition(-1);
        if (resume) b.addAllGenerated(s.generated).setPendingPosition(s.pendingPosition);
        return b.build();
    }

    /**
     * For a new session: the hop's first live stage that has answered a warm-up, so a head whose named
     * stage was down when it started (a tracker's stage answered instead) does not open every session
     * there only to fail it over; when none has answered, {@link #choose}.
     */
    private String chooseAnswered(int hop) {
        for (String a : addresses(hop)) if (!dead.containsKey(a) && warm.hasAnswered(a)) return a;
        return choose(hop, null);
    }

    /**
     * The hop's first address not known dead; when every one is, the one dead longest if that was
     * over {@link #RETRY_DEAD_NANOS} ago (a stage started again is taken back; a session failing over
     * now never goes back to the stage that just failed it); throws when none is left.
     */
    private String choose(int hop, String why) {
        List<String> addresses = addresses(hop);
        for (String a : addresses) if (!dead.containsKey(a)) return a;
        long now = System.nanoTime();
        String retry = null;
        for (String a : addresses) {
            Long at = dead.get(a);
            if (at != null && now - at > RETRY_DEAD_NANOS && (retry == null || at - dead.get(retry) < 0)) retry = a;
        }
        if (retry != null) {
            dead.remove(retry);
            return retry;
        }
        throw new RouteUnavailableException("hop " + (hop + 1) + " of the route (" + String.join("|", addresses)
                + ") has no live stage" + (why == null ? "" : ": " + why) + "; no alternate serves its span");
    }

    @Override
    public void send(Batch batch, ForwardResult boundary, long[] rowSessions) {
        if (closed) throw new RouteUnavailableException("the head is shutting down");
        int[] flight = {0};
        for (int r = 0; r < batch.size(); ) {
            int end = r + 1;
            while (end < batch.size() && rowSessions[end] == rowSessions[r]) end++;
            Head s = sessions.get(rowSessions[r]);
            if (s == null) throw new IllegalStateException("session " + rowSessions[r] + " is not open on the route");
            if (s.lost) throw new RouteUnavailableException("session " + rowSessions[r] + " lost its route");
            int out = -1;
            for (int i = r; i < end; i++) if (batch.wantsOutput(i)) out = i - r;
            links.send(s.wire, batch.position(r), boundary.outputArray(), boundary.outputOffset(r), end - r, out, false);
            s.sent = Math.max(s.sent, batch.position(r) + end - r);
            if (out >= 0) {
                s.pendingPosition = batch.position(r) + out;
                s.flight = flight;
                flight[0]++;
            }
            r = end;
        }
        links.flush();
        if (flight[0] > 0) peakFlights = Math.max(peakFlights, ++flights);
    }

    @Override
    public void receive(long timeoutNanos, Replies replies) {
        drained.clear();
        if (timeoutNanos > 0 && events.isEmpty()) {
            long t0 = System.nanoTime();
            try {
                Event first = events.poll(timeoutNanos, TimeUnit.NANOSECONDS);
                if (first != null) drained.add(first);
            } catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            } finally {
                waitedNanos.add(System.nanoTime() - t0);
            }
        }
        events.drainTo(drained);
        for (Event e : drained) {
            switch (e) {
                case Tokens t -> take(t, replies);
                case Failed f -> failover(f, replies);
                case Wake w -> { }
                case Closing c -> loseAll("the head is shutting down", replies);
            }
        }
        drained.clear();
    }

    /** Hands over the tokens awaited; late or repeated replies (after a replay) are ignored. */
    private void take(Tokens reply, Replies out) {
        boolean awaited = false;
        for (Token t : reply.tokens()) {
            Head s = byWire.get(t.getSession());
            if (s == null || s.pendingPosition != t.getPosition()) continue;
            if (!awaited && reply.sent() != HostClock.NO_STAMP) tokenTransits.add(System.nanoTime() - reply.sent());
            awaited = true;
            s.generated.add(t.getToken());
            s.pendingPosition = -1;
            land(s);
            if (s.recovery != null) {
                s.heldBy = s.recovery;
                s.heldSince = System.nanoTime();
            }
            recovered(s);
            out.token(s.sequenceId, t.getToken());
        }
    }

    /**
     * Moves every session routed through the failed stage to its hop's next alternate; the others are
     * lost. Every moved session is re-opened first and the kept rows of all of them go in one flush,
     * so the replacement computes them in full batches ({@link Downlinks#resume}).
     */
    private void failover(Failed f, Replies out) {
        String address = f.address(), reason = f.reason();
        FailoverPhases phases = new FailoverPhases(address, reason, f.epochMillis(), f.nanos());
        phases.handled(System.nanoTime());
        dead.put(address, System.nanoTime());
        Map<Long, String> lost = new HashMap<>();
        for (Head s : sessions.values()) {
            int hop = s.hops.indexOf(address);
            if (hop < 0 || s.lost) continue;
            String alt;
            try {
                alt = choose(hop, "stage " + address + " " + reason);
            } catch (RouteUnavailableException e) {
                s.lost = true;
                lost.put(s.sequenceId, e.getMessage());
                links.cancel(s.wire, "route lost: " + e.getMessage());
                continue;
            }
            s.hops.set(hop, alt);
            LOG.log(System.Logger.Level.WARNING, "session " + s.wire + ": stage " + address + " " + reason + "; moved to " + alt);
            phases.moved(alt, links.resume(s.wire, s.hops.getFirst(), open(s, true), s.pendingPosition));
            recovered(s);  // a session moved twice before its next token: the first failover stops waiting for it
            s.recovery = phases;
            // The replacement computes the dead span again for every position sent so far.
            s.recomputed += s.sent;
            recomputedTotal += s.sent;
            recovered++;
        }
        links.flush();
        phases.sent(System.nanoTime());
        // Reported after the scan: ending a session closes it here, which changes the map.
        lost.forEach(out::lost);
    }

    private void recovered(Head s) {
        if (s.recovery == null) return;
        s.recovery.next(System.nanoTime());
        s.recovery = null;
    }

    private void land(Head s) {
        if (s.flight != null && --s.flight[0] == 0) flights--;
        s.flight = null;
    }

    private void loseAll(String why, Replies out) {
        for (Long id : new ArrayList<>(sessions.keySet())) out.lost(id, why);
    }

    @Override
    public void close(long sequenceId, Phase phase, String reason) {
        Head s = sessions.remove(sequenceId);
        if (s == null) return;
        land(s);
        recovered(s);
        byWire.remove(s.wire);
        if (phase == Phase.FINISHED) links.close(s.wire);
        else links.cancel(s.wire, reason == null || reason.isEmpty() ? phase.name().toLowerCase() : reason);
    }

    /**
     * A session that has its first token after a failover waits until every session that failover moved has
     * one (or {@link #HOLD_NANOS} pass): until then the replacement is still replaying the others' rows, and
     * this one's next rows would be computed beside that replay (on every stage; on one machine, on the same
     * cores) and lengthen the pause of the sessions still waiting, which is the longest gap a client sees.
     */
    @Override
    public boolean holds(long sequenceId) {
        Head s = sessions.get(sequenceId);
        if (s == null || s.heldBy == null) return false;
        if (s.heldBy.settled() || System.nanoTime() - s.heldSince > HOLD_NANOS) s.heldBy = null;
        return s.heldBy != null;
    }

    @Override
    public int recomputedTokens(long sequenceId) {
        Head s = sessions.get(sequenceId);
        return s == null ? 0 : s.recomputed;
    }

    @Override
    public boolean replied() { return !events.isEmpty(); }

    @Override
    public void wake() { events.add(WAKE); }

    @Override
    public void tokens(dgr.node.stage.wire.Tokens reply) {
        List<Token> tokens = reply.getTokensList();
        for (Token t : tokens) if (Wire.isWarmUp(t.getSession()) && warm.answered(t.getSession())) links.close(t.getSession());
        // warm-up tokens among them are ignored: no session awaits them
        events.add(new Tokens(tokens, HostClock.stamp(reply.getClock(), reply.getSentNanos())));
        // The scheduler's next forward pass follows: its workers wake while it takes the tokens. After the add, so a
        // scheduler resting them just now either sees the tokens (HeadRoute.rest wakes them) or is followed by this.
        engine.wake();
    }

    @Override
    public void overhead(long nanos) { overheads.add(nanos); }

    /**
     * Median over the last replies of the time a reply took beyond the last stage's computing: the
     * transport of one row there and its token back (2 stages: one hop each way), in nanoseconds, or -1.
     */
    public long replyOverheadP50() { return overheads.median(); }

    /**
     * Median over the last awaited replies of a token's way back: from the last stage handing it to its
     * transport to the head's scheduler taking it, in nanoseconds; -1 when no reply came from a process on
     * this host's clock ({@link HostClock}).
     */
    public long tokenTransitP50() { return tokenTransits.median(); }

    @Override
    public void failed(String address, String reason, List<String> sessions) {
        for (String id : sessions) {
            if (!Wire.isWarmUp(id)) continue;
            warm.failed(id, "stage " + address + ": " + reason);
            links.cancel(id, "warm-up failed"); // frees its kept rows here and its state on the stages before the failed one
        }
        // A stage that fails only warm-up sessions (not up yet when the head started) is no failure yet.
        if (sessions.stream().allMatch(Wire::isWarmUp)) return;
        events.add(new Failed(address, reason, System.currentTimeMillis(), System.nanoTime()));
    }

    @Override
    public void load(dgr.node.stage.wire.StageLoad l) { load.update(l); }

    /** Fraction of the time since start the head's span waited for the route (its share of the bubble). */
    public double waitFraction() {
        long up = System.nanoTime() - startedNanos;
        return up <= 0 ? 0 : Math.min(1, (double) waitedNanos.sum() / up);
    }

    public long waitedNanos() { return waitedNanos.sum(); }

    /** Time since this route started. */
    public long clockNanos() { return System.nanoTime() - startedNanos; }

    /** Micro-batches with a token still awaited, now and at most so far. */
    public int flights() { return flights; }

    public int peakFlights() { return peakFlights; }

    /** Sessions moved to an alternate so far. */
    public long recoveredSessions() { return recovered; }

    /** Positions the route recomputed after failovers, all sessions together. */
    public long recomputedTokensTotal() { return recomputedTotal; }

    /** The later stages' busy time as they last reported it. */
    public RouteLoad load() { return load; }

    public long keptBytes() { return links.keptBytes(); }

    public List<String> neighbours() { return links.neighbours(); }

    public RouteSpec route() { return route; }

    @Override
    public void close() {
        closed = true;
        warm.close();
        events.add(new Closing());
        links.close();
    }
}
