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
    /** A row whose reply is awaited: when it was sent and how many rows it waits behind. */
    record Pending(long sentNanos, int rowsAhead) {}

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
        this.channel = NettyChannelBuilder.forTarget(address).usePlaintext()
                .maxInboundMessageSize(StageServer.MAX_MESSAGE_BYTES).build();
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

    synchronized void expect(String key, int rows) {
        // After a failover the last stage may re-send a token before this stage has replayed the row
        // it answers (the open travels ahead of the rows): that reply already counts.
        if (early.remove(key)) return;
        unansweredRows += rows;
        pending.put(key, new Pending(System.nanoTime(), unansweredRows));
    }

    synchronized void answered(String key) {
        Pending p = pending.remove(key);
        if (p == null) {
            early.add(key);
            if (early.size() > EARLY_KEPT) early.remove(early.iterator().next());
            return;
        }
        nanosPerRow = StepClock.update(nanosPerRow, measured, System.nanoTime() - p.sentNanos(), p.rowsAhead());
        measured = true;
        unansweredRows = Math.max(0, unansweredRows - p.rowsAhead());
    }

    synchronized double nanosPerRow() { return nanosPerRow; }

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
