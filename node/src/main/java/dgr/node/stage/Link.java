package dgr.node.stage;

import dgr.node.stage.wire.Down;
import dgr.node.stage.wire.StageGrpc;
import dgr.node.stage.wire.Up;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * One stream to a downstream stage ({@code host:port}), shared by every session this stage routes
 * there. Sends are serialised; replies and the stream's end go to the owner ({@link Downlinks}).
 * Records the rows whose token the head waits for, so a reply that does not come in time marks the
 * stage as hung ({@link StepClock}).
 */
final class Link {
    /** A row whose reply is awaited: when it was sent, how many rows it waits behind, and the flush it came in. */
    record Pending(long sentNanos, int rowsAhead, Sent sent) {}

    /**
     * The rows of one flush and how many of their awaited replies are still to come: the stage
     * computes a flush's rows as one batch, so every reply of it waits behind all of them, and the
     * rows stop counting as unanswered when the last reply has come.
     */
    static final class Sent {
        final int rows;
        int awaiting;

        Sent(int rows, int awaiting) {
            this.rows = rows;
            this.awaiting = awaiting;
        }
    }

    interface Owner {
        void received(Link link, Up up);

        void ended(Link link, String reason);
    }

    final String address;
    private final ManagedChannel channel;
    private final ClientCallStreamObserver<Down> out;
    final ConcurrentHashMap<String, Pending> pending = new ConcurrentHashMap<>();
    /** Replies that came before their row was expected (oldest first, at most {@link #EARLY_KEPT}). */
    private final java.util.LinkedHashSet<String> early = new java.util.LinkedHashSet<>();
    private static final int EARLY_KEPT = 4096;
    private volatile boolean dead;
    private int unansweredRows;
    private double nanosPerRow;
    private boolean measured;

    Link(String address, ClusterToken token, StepClock clock, Owner owner) {
        this.address = address;
        this.nanosPerRow = clock.initialNanosPerRow();
        // directExecutor: replies are handled on the transport's thread (Downlinks only records them
        // and enqueues or relays; nothing there blocks), one thread hand-off less per token.
        this.channel = NettyChannelBuilder.forTarget(address).usePlaintext()
                .maxInboundMessageSize(StageServer.MAX_MESSAGE_BYTES).directExecutor().build();
        Link self = this;
        var observer = new ClientResponseObserver<Down, Up>() {
            @Override
            public void beforeStart(ClientCallStreamObserver<Down> requestStream) {}

            @Override
            public void onNext(Up up) { owner.received(self, up); }

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
    synchronized void expect(java.util.List<String> keys, int rows) {
        java.util.List<String> waiting = new java.util.ArrayList<>(keys.size());
        // After a failover the last stage may re-send a token before this stage has replayed the row
        // it answers (the open travels ahead of the rows): that reply already counts.
        for (String k : keys) if (!early.remove(k)) waiting.add(k);
        if (waiting.isEmpty()) return;
        unansweredRows += rows;
        Sent sent = new Sent(rows, waiting.size());
        long now = System.nanoTime();
        for (String k : waiting) pending.put(k, new Pending(now, unansweredRows, sent));
    }

    /** A reply came; returns the time since its rows were sent, or -1 when it was not awaited. */
    synchronized long answered(String key) {
        Pending p = pending.remove(key);
        if (p == null) {
            early.add(key);
            if (early.size() > EARLY_KEPT) early.remove(early.iterator().next());
            return -1;
        }
        long rtt = System.nanoTime() - p.sentNanos();
        nanosPerRow = StepClock.update(nanosPerRow, measured, rtt, p.rowsAhead());
        measured = true;
        release(p);
        return rtt;
    }

    /** Stops awaiting a session's replies (it moved to another stage): its rows no longer count as unanswered. */
    synchronized void forget(String session) {
        var it = pending.entrySet().iterator();
        while (it.hasNext()) {
            var e = it.next();
            if (e.getKey().startsWith(session + "@")) {
                it.remove();
                release(e.getValue());
            }
        }
    }

    private void release(Pending p) {
        if (--p.sent().awaiting == 0) unansweredRows = Math.max(0, unansweredRows - p.sent().rows);
    }

    synchronized double nanosPerRow() { return nanosPerRow; }

    /** Starts from a step time measured on another link to the same span. */
    synchronized void seed(double perRow) {
        if (measured) return;
        nanosPerRow = perRow;
        measured = true;
    }

    synchronized boolean measured() { return measured; }

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
