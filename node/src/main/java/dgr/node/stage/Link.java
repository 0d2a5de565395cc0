package dgr.node.stage;

import dgr.node.stage.wire.Down;
import dgr.node.stage.wire.StageGrpc;
import dgr.node.stage.wire.Up;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.concurrent.TimeUnit;

/**
 * One stream to a downstream stage ({@code host:port}), shared by every session this stage routes
 * there. Sends are serialised; replies and the stream's end go to the owner ({@link Downlinks}).
 * Records the rows whose token the head waits for, so a reply that does not come in time marks the
 * stage as hung ({@link StepClock}).
 */
final class Link {
    /**
     * The rows of one flush whose replies are awaited. The stage computes a flush's rows as one batch,
     * so every reply of it has one deadline (sent together, waiting behind the same rows), and the rows
     * stop counting as unanswered when the last reply has come.
     */
    static final class Sent {
        final long sentNanos;
        final int rows;
        /** The rows each reply waits behind: this flush's and every row unanswered when it was sent. */
        final int rowsAhead;
        /** Replies still to come, and of them those that can be late (a warm-up row's reply only measures the link). */
        int awaiting, lateable;

        Sent(long sentNanos, int rows, int rowsAhead) {
            this.sentNanos = sentNanos;
            this.rows = rows;
            this.rowsAhead = rowsAhead;
        }
    }

    /**
     * An awaited reply: the token for a session's row at a position. A record, not a "session@position"
     * string, so a reply's key costs no string building and a session's keys are told by equality.
     */
    record Reply(String session, int position) {
        boolean warmUp() { return Wire.isWarmUp(session); }
    }

    interface Owner {
        void received(Link link, Up up);

        void ended(Link link, String reason);
    }

    final String address;
    private final ManagedChannel channel;
    private final ClientCallStreamObserver<Down> out;
    private final StepClock clock;
    /** The flush of each awaited reply. */
    private final HashMap<Reply, Sent> pending = new HashMap<>();
    /**
     * The flushes with replies still to come, oldest first: a reply's check of the deadlines goes over
     * these (as many as the batches in flight), not over every awaited row.
     */
    private final ArrayList<Sent> flushes = new ArrayList<>();
    /** Replies that came before their row was expected (oldest first, at most {@link #EARLY_KEPT}). */
    private final java.util.LinkedHashSet<Reply> early = new java.util.LinkedHashSet<>();
    private static final int EARLY_KEPT = 4096;
    private volatile boolean dead;
    /** What came from the stage and when: its silence tells a suspended stage from a busy one. */
    private final Silence silence = new Silence(System.nanoTime());
    private int unansweredRows;
    private final ReplyRates rates;

    Link(String address, ClusterToken token, StepClock clock, Owner owner) {
        this.address = address;
        this.clock = clock;
        this.rates = new ReplyRates(clock.initialNanosPerRow());
        // directExecutor: replies are handled on the transport's thread (Downlinks only records them
        // and enqueues or relays; nothing there blocks), one thread hand-off less per token.
        this.channel = NettyChannelBuilder.forTarget(address).usePlaintext()
                .maxInboundMessageSize(StageServer.MAX_MESSAGE_BYTES).directExecutor().build();
        Link self = this;
        var observer = new ClientResponseObserver<Down, Up>() {
            @Override
            public void beforeStart(ClientCallStreamObserver<Down> requestStream) {}

            @Override
            public void onNext(Up up) {
                boolean pulse = up.getKindCase() == Up.KindCase.PULSE;
                silence.heard(System.nanoTime(), pulse ? Math.max(1, up.getPulse().getEveryMillis()) * 1_000_000L : 0);
                if (pulse) return;  // a pulse only says the stage is alive; it is this hop's alone, not relayed
                owner.received(self, up);
            }

            @Override
            public void onError(Throwable t) {
                Status s = Status.fromThrowable(t);
                if (!dead) owner.ended(self, "stream broke: " + s.getCode() + (s.getDescription() == null ? "" : " (" + s.getDescription() + ")"));
            }

            @Override
            public void onCompleted() {
                if (!dead) owner.ended(self, "stream ended by the stage");
            }
        };
        this.out = (ClientCallStreamObserver<Down>) StageGrpc.newStub(channel).withCallCredentials(token.credentials()).link(observer);
    }

    boolean isDead() { return dead; }

    /** Sends, unless the link is dead (then the rows stay kept for a replay elsewhere). */
    synchronized void send(Down message) {
        if (dead) return;
        try {
            out.onNext(message);
        } catch (RuntimeException e) {
            // A stream cancelled under us: the owner hears of it through onError.
        }
    }

    /**
     * Awaits the replies {@code keys} to rows sent together ({@code rows} rows in all, in one flush).
     * Each reply's deadline counts every row of the flush and every row still unanswered before it.
     */
    synchronized void expect(java.util.List<Reply> keys, int rows) {
        java.util.List<Reply> waiting = new ArrayList<>(keys.size());
        // After a failover the last stage may re-send a token before this stage has replayed the row
        // it answers (the open travels ahead of the rows): that reply already counts.
        for (Reply k : keys) if (!early.remove(k)) waiting.add(k);
        if (waiting.isEmpty()) return;
        unansweredRows += rows;
        Sent sent = new Sent(System.nanoTime(), rows, unansweredRows);
        for (Reply k : waiting) {
            sent.awaiting++;
            if (!k.warmUp()) sent.lateable++;
            Sent before = pending.put(k, sent);
            if (before != null) release(k, before); // a flush counts the replies the map holds for it
        }
        flushes.add(sent);
    }

    /** A reply came; returns the time since its rows were sent, or -1 when it was not awaited. */
    synchronized long answered(Reply key) {
        Sent p = pending.remove(key);
        if (p == null) {
            early.add(key);
            if (early.size() > EARLY_KEPT) early.remove(early.iterator().next());
            return -1;
        }
        long rtt = System.nanoTime() - p.sentNanos;
        rates.update(rtt, p.rowsAhead);
        release(key, p);
        return rtt;
    }

    /** Stops awaiting a session's replies (it moved to another stage): its rows no longer count as unanswered. */
    synchronized void forget(String session) {
        var it = pending.entrySet().iterator();
        while (it.hasNext()) {
            var e = it.next();
            if (e.getKey().session().equals(session)) {
                it.remove();
                release(e.getKey(), e.getValue());
            }
        }
    }

    private void release(Reply key, Sent s) {
        if (!key.warmUp()) s.lateable--;
        if (--s.awaiting == 0) {
            unansweredRows = Math.max(0, unansweredRows - s.rows);
            flushes.remove(s);
        }
    }

    /** The flush whose replies fall due first, or null when no reply that can be late is awaited. */
    synchronized Sent firstDue() {
        Sent first = null;
        long firstAt = 0;
        for (int i = 0; i < flushes.size(); i++) {
            Sent s = flushes.get(i);
            if (s.lateable == 0) continue;
            long at = deadline(s);
            if (first == null || at - firstAt < 0) {
                first = s;
                firstAt = at;
            }
        }
        return first;
    }

    /** Whether a reply that can be late falls due before {@code at} ({@link System#nanoTime}). */
    synchronized boolean dueBefore(long at) {
        for (int i = 0; i < flushes.size(); i++) {
            Sent s = flushes.get(i);
            if (s.lateable > 0 && deadline(s) - at < 0) return true;
        }
        return false;
    }

    /** When the replies of a flush are due, from the step time measured now. */
    synchronized long deadline(Sent s) {
        return clock.deadline(s.sentNanos, rates.measured(), rates.nanosPerRow(s.rowsAhead), s.rowsAhead);
    }

    /**
     * When the stage counts as hung for its silence while a reply is awaited: nothing, not even a
     * pulse, since its last word ({@link StepClock#silentAfter}, {@link Silence}), however long
     * before the awaited rows were sent: a stage pulses whether it has rows or not, and one suspended while this
     * side computed the flush's rows (a head's span: 0.1-0.3 s) had already been silent that long. Never
     * for a stage that has not pulsed yet (one of protocol 1, or whose stream's first pulse is still to
     * come): only its replies' deadline applies.
     */
    long silentAfter() {
        if (!silence.pulses()) return silence.heard() + Long.MAX_VALUE / 4;
        return clock.silentAfter(silence.heard(), silence.unitNanos());
    }

    /** Why the stage counts as hung at {@code now} when {@link #silentAfter} has passed. */
    String silenceReason(long now) {
        return "silent for " + (now - silence.heard()) / 1_000_000 + " ms, no reply and no pulse (it pulses every "
                + silence.periodNanos() / 1_000_000 + " ms, longest gap lately " + silence.recentGapNanos() / 1_000_000
                + " ms; allowed: the " + clock.floorNanos() / 1_000_000 + " ms floor and " + StepClock.SILENT_PULSES + " × "
                + silence.unitNanos() / 1_000_000 + " ms)";
    }

    /** The time per row a flush behind {@code rowsAhead} rows is given ({@link ReplyRates}). */
    synchronized double nanosPerRow(int rowsAhead) { return rates.nanosPerRow(rowsAhead); }

    /** The rate a new link to the same span starts from ({@link ReplyRates#known}). */
    synchronized double knownNanosPerRow() { return rates.known(); }

    /** Starts from a step time measured on another link to the same span. */
    synchronized void seed(double perRow) { rates.seed(perRow); }

    synchronized boolean measured() { return rates.measured(); }

    /** Closes the stream and the channel now; idempotent. The owner is not called back. */
    void kill() {
        synchronized (this) {
            if (dead) return;
            dead = true;
            try {
                out.cancel("stage declared dead", null);
            } catch (RuntimeException ignored) {
                // already closed
            }
        }
        channel.shutdownNow();
    }

    /** Ends the stream politely (no sessions left); idempotent. */
    void finish() {
        synchronized (this) {
            if (dead) return;
            dead = true;
            try {
                out.onCompleted();
            } catch (RuntimeException ignored) {
                // already closed
            }
        }
        channel.shutdown();
        try {
            if (!channel.awaitTermination(1, TimeUnit.SECONDS)) channel.shutdownNow();
        } catch (InterruptedException e) {
            channel.shutdownNow();
            Thread.currentThread().interrupt();
        }
    }
}
