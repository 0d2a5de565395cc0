package dgr.node.stage;

import dgr.engine.Batch;
import dgr.engine.Engine;
import dgr.engine.ForwardResult;
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

/**
 * The head's route: opens each session on the stages after its span, sends its boundary rows down
 * and waits for the last stage's tokens. When a stage dies or hangs it moves the sessions routed
 * through it to the hop's next alternate (re-opening them down the new route, the stage before the
 * dead one replaying its kept rows), so the client sees only a pause; with no alternate left it
 * throws {@link RouteUnavailableException}, and the sessions end with a 503.
 */
public final class HeadDownstream implements Downstream, Downlinks.Listener, AutoCloseable {
    private static final System.Logger LOG = System.getLogger(HeadDownstream.class.getName());

    private sealed interface Event {}
    private record Tokens(List<Token> tokens) implements Event {}
    private record Failed(String address, String reason) implements Event {}
    private record Closing() implements Event {}

    private static final class Head {
        final String wire;
        final SamplerConfig sampler;
        final List<String> hops;
        final List<Integer> generated = new ArrayList<>();
        int pendingPosition = -1;
        int pendingRow;
        String lost;

        Head(String wire, SamplerConfig sampler, List<String> hops) {
            this.wire = wire;
            this.sampler = sampler;
            this.hops = hops;
        }
    }

    private final RouteSpec route;
    private final Downlinks links;
    private final String modelRecipeId, schemaId, prefix;
    private final int firstLayerAfter;
    private final Set<String> dead = ConcurrentHashMap.newKeySet();
    private final LinkedBlockingQueue<Event> events = new LinkedBlockingQueue<>();
    private final Map<Long, Head> sessions = new HashMap<>();
    private final Map<String, Head> byWire = new HashMap<>();
    private volatile boolean closed;
    private volatile long recovered;
    private final long startedNanos = System.nanoTime();
    private final java.util.concurrent.atomic.LongAdder waitedNanos = new java.util.concurrent.atomic.LongAdder();

    public HeadDownstream(Engine head, RouteSpec route, ClusterToken token, StepClock clock) {
        this.route = route;
        this.modelRecipeId = Wire.modelRecipeId(head);
        this.schemaId = head.boundarySchema().id();
        this.firstLayerAfter = head.recipe().endLayer();
        this.links = new Downlinks(token, clock, head.boundarySchema().rowWidth(), this);
        this.prefix = HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextLong()) + "-";
        links.connect(route.preferred().getFirst());
    }

    @Override
    public void open(long sequenceId, TokenSampler sampler) {
        SamplerConfig config = sampler.portableConfig();
        if (config == null) throw new IllegalArgumentException("this session's sampler cannot travel to the route's last stage");
        List<String> hops = new ArrayList<>();
        for (int h = 0; h < route.hops().size(); h++) hops.add(choose(h, null));
        Head s = new Head(prefix + sequenceId, config, hops);
        sessions.put(sequenceId, s);
        byWire.put(s.wire, s);
        links.open(s.wire, hops.getFirst(), open(s, false));
    }

    private Open open(Head s, boolean resume) {
        Open.Builder b = Open.newBuilder().setSession(s.wire).setProtocol(Wire.PROTOCOL).setModelRecipeId(modelRecipeId)
                .setFirstLayer(firstLayerAfter).setBoundarySchemaId(schemaId).addAllNextHops(s.hops.subList(1, s.hops.size()))
                .setSampling(Wire.sampling(s.sampler)).setResume(resume).setPendingPosition(-1);
        if (resume) b.addAllGenerated(s.generated).setPendingPosition(s.pendingPosition);
        return b.build();
    }

    /** The hop's first address not known dead; throws when none is left. */
    private String choose(int hop, String why) {
        for (String a : route.hops().get(hop).addresses()) if (!dead.contains(a)) return a;
        throw new RouteUnavailableException("hop " + (hop + 1) + " of the route (" + String.join("|", route.hops().get(hop).addresses())
                + ") has no live stage" + (why == null ? "" : ": " + why) + "; no alternate serves its span");
    }

    @Override
    public void forward(Batch batch, ForwardResult boundary, long[] rowSessions, int[] tokens) {
        if (closed) throw new RouteUnavailableException("the head is shutting down");
        int expected = 0;
        for (int r = 0; r < batch.size(); ) {
            int end = r + 1;
            while (end < batch.size() && rowSessions[end] == rowSessions[r]) end++;
            Head s = sessions.get(rowSessions[r]);
            if (s == null) throw new IllegalStateException("session " + rowSessions[r] + " is not open on the route");
            if (s.lost != null) throw new RouteUnavailableException(s.lost);
            int out = -1;
            for (int i = r; i < end; i++) if (batch.wantsOutput(i)) out = i - r;
            links.send(s.wire, batch.position(r), boundary.outputArray(), boundary.outputOffset(r), end - r, out, false);
            if (out >= 0) {
                s.pendingPosition = batch.position(r) + out;
                s.pendingRow = r + out;
                expected++;
            }
            r = end;
        }
        links.flush();
        long t0 = System.nanoTime();
        try {
            await(expected, tokens);
        } finally {
            waitedNanos.add(System.nanoTime() - t0);
        }
    }

    private void await(int expected, int[] tokens) {
        while (expected > 0) {
            Event e;
            try {
                e = events.take();
            } catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                throw new RouteUnavailableException("interrupted while waiting for the route");
            }
            switch (e) {
                case Tokens t -> expected -= take(t.tokens(), tokens);
                case Failed f -> failover(f.address(), f.reason());
                case Closing c -> throw new RouteUnavailableException("the head is shutting down");
            }
        }
    }

    /** Fills the tokens awaited; late or repeated replies (after a replay) are ignored. */
    private int take(List<Token> replies, int[] tokens) {
        int got = 0;
        for (Token t : replies) {
            Head s = byWire.get(t.getSession());
            if (s == null || s.pendingPosition != t.getPosition()) continue;
            tokens[s.pendingRow] = t.getToken();
            s.generated.add(t.getToken());
            s.pendingPosition = -1;
            got++;
        }
        return got;
    }

    /** Moves every session routed through {@code address} to its hop's next alternate. */
    private void failover(String address, String reason) {
        dead.add(address);
        String lostWhy = null;
        for (Head s : sessions.values()) {
            int hop = s.hops.indexOf(address);
            if (hop < 0 || s.lost != null) continue;
            String alt;
            try {
                alt = choose(hop, "stage " + address + " " + reason);
            } catch (RouteUnavailableException e) {
                s.lost = e.getMessage();
                lostWhy = e.getMessage();
                links.cancel(s.wire, "route lost: " + e.getMessage());
                continue;
            }
            s.hops.set(hop, alt);
            LOG.log(System.Logger.Level.WARNING, "session " + s.wire + ": stage " + address + " " + reason + "; moved to " + alt);
            links.resume(s.wire, s.hops.getFirst(), open(s, true), s.pendingPosition);
            recovered++;
        }
        if (lostWhy != null) throw new RouteUnavailableException(lostWhy);
    }

    @Override
    public void close(long sequenceId, Phase phase, String reason) {
        Head s = sessions.remove(sequenceId);
        if (s == null) return;
        byWire.remove(s.wire);
        if (phase == Phase.FINISHED) links.close(s.wire);
        else links.cancel(s.wire, reason == null || reason.isEmpty() ? phase.name().toLowerCase() : reason);
    }

    @Override
    public void tokens(List<Token> tokens) { events.add(new Tokens(tokens)); }

    @Override
    public void failed(String address, String reason, List<String> sessions) { events.add(new Failed(address, reason)); }

    /** Fraction of the time since start the head's span waited for the route (its share of the bubble). */
    public double waitFraction() {
        long up = System.nanoTime() - startedNanos;
        return up <= 0 ? 0 : Math.min(1, (double) waitedNanos.sum() / up);
    }

    public long waitedNanos() { return waitedNanos.sum(); }

    /** Sessions moved to an alternate so far. */
    public long recoveredSessions() { return recovered; }

    public long keptBytes() { return links.keptBytes(); }

    public List<String> neighbours() { return links.neighbours(); }

    public RouteSpec route() { return route; }

    @Override
    public void close() {
        closed = true;
        events.add(new Closing());
        links.close();
    }
}
