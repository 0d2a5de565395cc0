package dgr.node.stage;

import dgr.engine.Batch;
import dgr.engine.Engine;
import dgr.engine.ForwardResult;
import dgr.engine.StateSlot;
import dgr.engine.sampler.Sampler;
import dgr.node.stage.wire.Down;
import dgr.node.stage.wire.Open;
import dgr.node.stage.wire.Rows;
import dgr.node.stage.wire.StageFailed;
import dgr.node.stage.wire.StageLoad;
import dgr.node.stage.wire.Token;
import dgr.node.stage.wire.Tokens;
import dgr.node.stage.wire.Up;
import io.grpc.Status;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * The loop of a stage that is not first: takes what upstream neighbours send (in arrival order),
 * batches the rows that have arrived from every session and link into one forward pass over the
 * span, then samples (last stage) or sends the boundary rows on (others). One turn of the loop at
 * a time owns every session's state ({@link LoopTurn}: the stage's own thread, or on the last stage
 * the transport thread that brought rows to an idle loop); replies from downstream are relayed up
 * from gRPC's threads.
 *
 * <p>A message that breaks the protocol (unknown session, wrong row length, positions out of order,
 * a different recipe or boundary schema) refuses its stream with a status naming the fault; the
 * stage keeps serving the others. Sessions whose upstream stream broke are kept for
 * {@code orphanGrace} so a failover can re-attach them, then freed.
 */
final class StageWorker implements Downlinks.Listener, AutoCloseable {
    private static final System.Logger LOG = System.getLogger(StageWorker.class.getName());

    sealed interface Op {}
    record Message(UpLink link, Down down) implements Op {}
    record Gone(UpLink link, String why) implements Op {}

    private final Engine engine;
    private final boolean last;
    private final int width, maxRows;
    private final String modelRecipeId, schemaId;
    private final long orphanGraceNanos;
    private final Downlinks down;
    private final Batch batch;
    private final float[] rowScratch;
    private final ConcurrentLinkedQueue<Op> ops = new ConcurrentLinkedQueue<>();
    private final Map<String, StageSession> sessions = new HashMap<>();
    private final Map<String, UpLink> upOf = new ConcurrentHashMap<>();
    private final List<Planned> planned = new ArrayList<>();
    private final StageStats stats;
    private final LoopTurn turn;
    private static final long LOAD_EVERY_NANOS = 250_000_000L;
    /** The loop turns at least this often with nothing queued: orphans expire, loads go up. */
    private static final long TICK_MILLIS = 50;
    /**
     * Rows delivered this soon after an inline batch ended came in the same read (LoopTurn): the
     * stage's thread computes them, so the transport thread writes the previous batch's tokens first.
     * A decode row of a route waiting for its token comes far later (the head computes in between).
     */
    private static final long BACK_TO_BACK_NANOS = 200_000;
    private long lastLoadNanos;
    /** Upstream streams that have sent something and not ended: where loads go (gRPC threads read it too). */
    private final java.util.Set<UpLink> ups = ConcurrentHashMap.newKeySet();
    /** Tells the upstream neighbours this stage is alive while it computes, or waits, without a word for them. */
    private final Pulses pulses;

    /**
     * Rows of one session in the batch being formed; {@code sent}: when the upstream stage handed them to its
     * transport, on this process's clock, or {@link HostClock#NO_STAMP}.
     */
    private record Planned(StageSession session, int from, int count, int outputRow, boolean replay, int row, long sent) {}

    StageWorker(Engine engine, ClusterToken token, StepClock clock, long orphanGraceNanos, StageStats stats) {
        this.engine = engine;
        this.last = engine.recipe().isLastStage();
        this.width = engine.boundarySchema().rowWidth();
        this.maxRows = engine.features().maxRows();
        this.modelRecipeId = Wire.modelRecipeId(engine);
        this.schemaId = engine.boundarySchema().id();
        this.orphanGraceNanos = orphanGraceNanos;
        this.stats = stats;
        this.down = last ? null : new Downlinks(token, clock, width, this);
        this.batch = new Batch(maxRows, width);
        this.rowScratch = new float[width];
        String span = engine.recipe().firstLayer() + "-" + engine.recipe().endLayer();
        this.turn = new LoopTurn("dgr-stage-" + span, TICK_MILLIS, BACK_TO_BACK_NANOS, this::turn);
        // Last: its thread starts at once, and nothing after it may fail and leave it running.
        this.pulses = new Pulses(ups, "dgr-stage-pulse-" + span);
    }

    /**
     * Queues what an upstream stream brought. On the last stage a message of decode rows (not a replay, {@link #INLINE_ROWS}) is
     * computed at once on the calling transport thread when the loop is idle, and its token written
     * from there ({@link LoopTurn}: two thread hand-offs fewer per decode token). Other stages keep
     * their transport threads free: a middle stage relays tokens from further down up through them,
     * and a replay's messages are left to gather into full batches on the loop's thread.
     */
    void submit(Op op) {
        // Inline only when this message is all there is: a turn drains the whole queue, and a transport
        // thread must not take up a replay (or another link's rows) queued for the loop's thread just before.
        boolean alone = ops.isEmpty();
        ops.add(op);
        boolean rows = op instanceof Message m && m.down().getKindCase() == Down.KindCase.ROWS;
        // Rows for the next forward pass: the engine's workers (rested while the stage waited) wake now, in
        // parallel with the loop taking the message and planning the batch.
        if (rows) engine.wake();
        turn.arrived(alone && last && rows && inlineable(((Message) op).down()));
    }

    /**
     * Rows a message may hold to be computed inline: a decode batch's. The transport thread that computes
     * them writes nothing else meanwhile, this stage's {@link Pulses} on that stream included, and a
     * 64-row prompt chunk of a 5-layer llama-1b last stage took over 0.5 s on a slow host: its upstream
     * declared it hung for its silence (the chunk's rows gain nothing from skipping a hand-off anyway).
     */
    static final int INLINE_ROWS = ReplyRates.LARGE_ROWS;

    /** Whether a message of rows may be computed inline: no replay, at most {@link #INLINE_ROWS} rows. */
    private static boolean inlineable(Down d) {
        int n = 0;
        for (Rows r : d.getRows().getRowsList()) {
            if (r.getReplay()) return false;
            n += r.getCount();
        }
        return n <= INLINE_ROWS;
    }

    /** One turn of the loop: what has come, in order, then one batch of it. */
    private void turn() {
        try {
            expireOrphans(System.nanoTime());
            for (Op op; (op = ops.poll()) != null; ) handle(op);
            runBatch();
            // Nothing queued: the next rows come over the wire, so the workers park now, leaving the cores to the
            // transport's threads that carry this turn's rows or tokens on (and to a neighbour stage sharing them).
            // Only here, at the turn's end: between the batches of one long message the workers stay awake.
            if (ops.isEmpty()) {
                engine.rest();
                if (!ops.isEmpty()) engine.wake();  // rows came meanwhile: their submit's wake may have come first
            }
            if (down != null) down.flush();  // replays queued by the opens of a failover (Downlinks.resume), all at once
            publish();
            reportLoad(System.nanoTime());
        } catch (RuntimeException | Error e) {
            LOG.log(System.Logger.Level.ERROR, "stage loop failed; the batch's sessions are dropped", e);
            for (Planned p : planned) {
                p.session().plannedRows = 0;  // a session re-attached later must not count rows that never ran
                refuse(p.session().up, Status.INTERNAL.withDescription("stage failed: " + e));
            }
            planned.clear();
            batch.clear();
        }
    }

    private void handle(Op op) {
        switch (op) {
            case Gone g -> { runBatch(); ups.remove(g.link()); orphan(g.link(), g.why()); }
            case Message m -> {
                if (m.link().ended()) return;
                ups.add(m.link());
                switch (m.down().getKindCase()) {
                    case ROWS -> {
                        var rows = m.down().getRows();
                        long sent = HostClock.stamp(rows.getClock(), rows.getSentNanos());
                        for (Rows r : rows.getRowsList()) if (!plan(m.link(), r, sent)) return;
                    }
                    case OPEN -> { runBatch(); open(m.link(), m.down().getOpen()); }
                    case CLOSE -> { runBatch(); end(m.link(), m.down().getClose().getSession(), null); }
                    case CANCEL -> { runBatch(); end(m.link(), m.down().getCancel().getSession(), m.down().getCancel().getReason()); }
                    default -> refuse(m.link(), Status.INVALID_ARGUMENT.withDescription("empty message: expected open, rows, close or cancel"));
                }
            }
        }
    }

    // ---- open / close ----

    private void open(UpLink link, Open o) {
        String fault = checkOpen(o);
        if (fault != null) {
            refuse(link, Status.FAILED_PRECONDITION.withDescription("open of session " + o.getSession() + " refused: " + fault));
            return;
        }
        dgr.engine.sampler.SamplerConfig sampling = null;
        dgr.engine.sampler.LogitBias bias = null;
        if (last) {
            try {
                sampling = Wire.samplerConfig(o.getSampling());
                bias = Wire.logitBias(o.getSampling());
                if (bias.maxToken() >= engine.info().vocabSize()) {
                    throw new IllegalArgumentException("logit bias names token " + bias.maxToken() + ", outside the vocabulary of " + engine.info().vocabSize());
                }
            } catch (IllegalArgumentException e) {
                refuse(link, Status.INVALID_ARGUMENT.withDescription("open of session " + o.getSession() + " refused: sampler: " + e.getMessage()));
                return;
            }
        }
        StageSession s = sessions.get(o.getSession());
        if (s != null && !o.getResume()) {
            refuse(link, Status.INVALID_ARGUMENT.withDescription("session " + o.getSession() + " is already open on this stage"));
            return;
        }
        if (s == null) {
            s = new StageSession(o.getSession(), engine.openSlot());
            sessions.put(s.id, s);
        }
        s.up = link;
        s.orphanedAt = -1;
        upOf.put(s.id, link);
        if (last) {
            s.resetSampler(sampling, bias, engine.info().vocabSize(), o.getGeneratedList());
            if (o.getResume() && o.getPendingPosition() >= 0 && s.cachedPosition == o.getPendingPosition()) {
                // The token went up before the failure but never reached the head: send it again.
                s.sampler.accept(s.cachedToken);
                s.sampler.skipTo(o.getGeneratedCount() + 1);
                reply(link, s, s.cachedPosition, s.cachedToken);
            }
            return;
        }
        String next = o.getNextHops(0);
        Open onward = o.toBuilder().setFirstLayer(engine.recipe().endLayer()).clearNextHops()
                .addAllNextHops(o.getNextHopsList().subList(1, o.getNextHopsCount())).build();
        if (down.has(s.id)) down.resume(s.id, next, onward, o.getPendingPosition());
        else down.open(s.id, next, onward);
    }

    private String checkOpen(Open o) {
        if (o.getSession().isEmpty()) return "no session id";
        if (o.getProtocol() != Wire.PROTOCOL) return "protocol " + o.getProtocol() + " (sender) differs from " + Wire.PROTOCOL + " (this stage)";
        if (!o.getModelRecipeId().equals(modelRecipeId)) {
            return "recipe " + o.getModelRecipeId() + " (sender) differs from " + modelRecipeId + " (this stage: " + engine.recipe().artifactSha256().substring(0, 12)
                    + ", context " + engine.recipe().contextLength() + ", state dtype " + engine.recipe().stateDtype() + ")";
        }
        if (!o.getBoundarySchemaId().equals(schemaId)) return "boundary schema " + o.getBoundarySchemaId() + " (sender) differs from " + schemaId + " (this stage)";
        if (o.getFirstLayer() != engine.recipe().firstLayer()) {
            return "the sender expects layer " + o.getFirstLayer() + " next, this stage serves [" + engine.recipe().firstLayer() + ", " + engine.recipe().endLayer() + ")";
        }
        if (last && o.getNextHopsCount() > 0) return "the route goes on to " + o.getNextHops(0) + " after this stage, which ends the model";
        if (!last && o.getNextHopsCount() == 0) {
            return "the route ends at this stage, which serves layers [" + engine.recipe().firstLayer() + ", " + engine.recipe().endLayer()
                    + ") of " + engine.recipe().nLayers();
        }
        return null;
    }

    private void end(UpLink link, String id, String cancelReason) {
        StageSession s = sessions.get(id);
        if (s == null) return;  // ended here already (a close racing a cancel): nothing to free
        if (s.up != link) return;
        free(s, cancelReason == null ? null : cancelReason);
    }

    private void free(StageSession s, String cancelReason) {
        sessions.remove(s.id);
        upOf.remove(s.id);
        s.slot.close();
        if (down != null) {
            if (cancelReason == null) down.close(s.id);
            else down.cancel(s.id, cancelReason);
        }
    }

    private void orphan(UpLink link, String why) {
        long now = System.nanoTime();
        for (StageSession s : sessions.values()) if (s.up == link && s.orphanedAt < 0) s.orphanedAt = now;
        LOG.log(System.Logger.Level.INFO, link + " ended (" + why + ")");
    }

    private void expireOrphans(long now) {
        List<StageSession> expired = new ArrayList<>();
        for (StageSession s : sessions.values()) if (s.orphanedAt >= 0 && now - s.orphanedAt > orphanGraceNanos) expired.add(s);
        for (StageSession s : expired) free(s, "upstream stream ended");
    }

    private void refuse(UpLink link, Status status) {
        if (link == null) return;
        LOG.log(System.Logger.Level.WARNING, "refusing " + link + ": " + status.getCode() + " " + status.getDescription());
        link.fail(status);
        ups.remove(link);
        orphan(link, status.getDescription());
    }

    // ---- rows ----

    /** Adds one wire entry to the batch being formed ({@code sent}: its message's stamp); false when it refused the link. */
    private boolean plan(UpLink link, Rows r, long sent) {
        StageSession s = sessions.get(r.getSession());
        String fault = null;
        if (s == null) fault = "rows for unknown session " + r.getSession();
        else if (s.up != link) return true;  // stale rows from a link the session has left
        else if (r.getCount() < 1 || r.getCount() > maxRows) fault = "row count " + r.getCount() + " is outside 1.." + maxRows;
        else if ((long) r.getData().size() != (long) r.getCount() * width * Float.BYTES) {
            fault = "session " + s.id + ": " + r.getData().size() + " row bytes for " + r.getCount() + " rows; schema " + schemaId
                    + " needs " + (long) r.getCount() * width * Float.BYTES;
        } else if (r.getOutputRow() < -1 || r.getOutputRow() >= r.getCount()) fault = "output row " + r.getOutputRow() + " is outside -1.." + (r.getCount() - 1);
        if (fault != null) {
            refuse(link, Status.INVALID_ARGUMENT.withDescription(fault));
            return false;
        }
        int expected = s.slot.length() + s.plannedRows;
        int skip = 0;
        if (r.getFirstPosition() != expected) {
            if (r.getReplay() && r.getFirstPosition() < expected) skip = Math.min(r.getCount(), expected - r.getFirstPosition());
            else {
                refuse(link, Status.INVALID_ARGUMENT.withDescription("session " + s.id + ": rows start at position " + r.getFirstPosition()
                        + ", expected " + expected + " (positions out of order)"));
                return false;
            }
        }
        int count = r.getCount() - skip;
        if (count == 0) return true;  // a replay of rows this stage holds already
        if (expected + count > s.slot.capacity()) {
            refuse(link, Status.OUT_OF_RANGE.withDescription("session " + s.id + ": position " + (expected + count - 1) + " is past the context " + s.slot.capacity()));
            return false;
        }
        int out = r.getOutputRow() - skip;
        var data = r.getData().asReadOnlyByteBuffer().order(java.nio.ByteOrder.LITTLE_ENDIAN).asFloatBuffer();
        for (int done = 0; done < count; ) {
            // A long run of one session's rows (a replay after a failover, a prefill) comes in several
            // entries back to back: they join the batch being formed as one instead of each ending it.
            // Any other second entry of a session in the batch ends the batch first.
            Planned prev = planned.isEmpty() ? null : planned.getLast();
            boolean extend = s.plannedRows > 0 && prev != null && prev.session() == s && prev.replay() == r.getReplay()
                    && (prev.outputRow() < 0 || out - done < 0);
            int room = maxRows - batch.size();
            // An entry that does not fit starts the next batch; a replay's rows fill this one exactly
            // (a failover's pause is the batches its replay takes) and the rest start the next.
            if ((s.plannedRows > 0 && !extend) || room == 0 || (!r.getReplay() && count > room)) {
                runBatch();
                extend = false;
                room = maxRows;
            }
            int n = Math.min(count - done, room), o = out - done >= 0 && out - done < n ? out - done : -1;
            int row0 = batch.size(), from = expected + done;
            for (int i = 0; i < n; i++) {
                data.get((skip + done + i) * width, rowScratch, 0, width);
                batch.addBoundary(s.slot, from + i, rowScratch, 0, last ? i == o : true);
            }
            if (extend) {
                planned.removeLast();
                planned.add(new Planned(s, prev.from(), prev.count() + n, o >= 0 ? prev.count() + o : prev.outputRow(), prev.replay(), prev.row(), prev.sent()));
                s.plannedRows += n;
            } else {
                s.plannedRows = n;
                planned.add(new Planned(s, from, n, o, r.getReplay(), row0, sent));
            }
            done += n;
        }
        return true;
    }

    private void runBatch() {
        if (batch.size() == 0) return;
        long t0 = System.nanoTime();
        recordTransit(t0);
        ForwardResult result = engine.forward(batch);
        Map<UpLink, Tokens.Builder> replies = new LinkedHashMap<>();
        int replayRows = 0, replaySessions = 0;
        for (Planned p : planned) {
            StageSession s = p.session();
            s.plannedRows = 0;
            if (p.replay()) {
                stats.replayed(p.count());
                replayRows += p.count();
                replaySessions++;
            }
            if (last) {
                if (p.outputRow() < 0) continue;
                int row = p.row() + p.outputRow();
                int token = s.sampler.sample(result.outputArray(), result.outputOffset(row), result.outputWidth());
                s.cachedPosition = p.from() + p.outputRow();
                s.cachedToken = token;
                replies.computeIfAbsent(s.up, k -> Tokens.newBuilder())
                        .addTokens(Token.newBuilder().setSession(s.id).setPosition(s.cachedPosition).setToken(token));
            } else {
                down.send(s.id, p.from(), result.outputArray(), result.outputOffset(p.row()), p.count(), p.outputRow(), p.replay());
            }
        }
        if (down != null) down.flush();
        long handed = System.nanoTime(), computed = handed - t0;
        for (var e : replies.entrySet()) {
            e.getKey().send(Up.newBuilder().setTokens(e.getValue().setComputeNanos(computed).setSentNanos(handed).setClock(HostClock.ID)).build());
        }
        stats.batch(batch.size(), System.nanoTime() - t0);
        if (replayRows > 0) logReplay(replayRows, replaySessions, System.nanoTime() - t0);
        planned.clear();
        batch.clear();
    }

    /**
     * The per-hop latency of each decode row in the batch (one row of a session, not a replay, from a
     * process on this clock): from its hand-off upstream to this forward's start (docs/stages.md).
     */
    private void recordTransit(long forwardStart) {
        for (Planned p : planned) {
            if (p.count() == 1 && !p.replay() && p.sent() != HostClock.NO_STAMP) stats.rowTransit(forwardStart - p.sent());
        }
    }

    /** A failover's replay, batch by batch (docs/stages.md, "What a failover costs"): where its pause goes. */
    private void logReplay(int rows, int sessions, long nanos) {
        LOG.log(System.Logger.Level.INFO, "replay: " + rows + " rows of " + sessions + " sessions in a batch of " + batch.size()
                + " rows, " + nanos / 1_000_000 + " ms");
    }

    private void reply(UpLink link, StageSession s, int position, int token) {
        link.send(Up.newBuilder().setTokens(Tokens.newBuilder().addTokens(Token.newBuilder().setSession(s.id).setPosition(position).setToken(token))).build());
    }

    /** Sends this stage's busy time up every {@link #LOAD_EVERY_NANOS} while it holds sessions. */
    private void reportLoad(long now) {
        if (now - lastLoadNanos < LOAD_EVERY_NANOS || ups.isEmpty()) return;
        lastLoadNanos = now;
        load(StageLoad.newBuilder().setFirstLayer(engine.recipe().firstLayer()).setEndLayer(engine.recipe().endLayer())
                .setBusyNanos(stats.busyNanos()).setClockNanos(stats.clockNanos()).build());
    }

    /** Sends a stage's load (this one's, or one relayed from further down) to every upstream neighbour. */
    @Override
    public void load(StageLoad l) {
        Up up = Up.newBuilder().setLoad(l).build();
        for (UpLink link : ups) link.send(up);
    }

    private void publish() {
        long bytes = 0;
        for (StageSession s : sessions.values()) bytes += s.slot.bytes();
        stats.state(sessions.size(), bytes, down == null ? 0 : down.keptBytes(), down == null ? List.of() : down.neighbours());
    }

    // ---- replies from further down, relayed up (gRPC threads) ----

    @Override
    public void tokens(Tokens reply) {
        Map<UpLink, Tokens.Builder> byLink = new LinkedHashMap<>();
        for (Token t : reply.getTokensList()) {
            UpLink l = upOf.get(t.getSession());
            if (l != null) byLink.computeIfAbsent(l, k -> Tokens.newBuilder()).addTokens(t);
        }
        // The last stage's computing time and hand-off stamp go up unchanged: the head measures the whole way back.
        for (var e : byLink.entrySet()) {
            e.getKey().send(Up.newBuilder().setTokens(e.getValue().setComputeNanos(reply.getComputeNanos())
                    .setSentNanos(reply.getSentNanos()).setClock(reply.getClock())).build());
        }
    }

    @Override
    public void failed(String address, String reason, List<String> affected) {
        Map<UpLink, List<String>> byLink = new LinkedHashMap<>();
        for (String id : affected) {
            UpLink l = upOf.get(id);
            if (l != null) byLink.computeIfAbsent(l, k -> new ArrayList<>()).add(id);
        }
        for (var e : byLink.entrySet()) {
            e.getKey().send(Up.newBuilder().setFailed(StageFailed.newBuilder().setAddress(address).setReason(reason).addAllSessions(e.getValue())).build());
        }
    }

    @Override
    public void close() {
        pulses.close();
        turn.close();
        for (Iterator<StageSession> it = sessions.values().iterator(); it.hasNext(); ) {
            it.next().slot.close();
            it.remove();
        }
        upOf.clear();
        if (down != null) down.close();
        stats.state(0, 0, 0, List.of());
    }
}
