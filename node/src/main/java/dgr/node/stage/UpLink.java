package dgr.node.stage;

import dgr.node.stage.wire.Up;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;

/** The stream from an upstream neighbour, as the receiving stage sees it: replies go back on it. */
final class UpLink {
    final long id;
    final String peer;
    private final ServerCallStreamObserver<Up> out;
    private boolean ended;
    /** When anything was last handed to this stream ({@link System#nanoTime}): a pulse goes only after a quiet while. */
    private long sentNanos = System.nanoTime();

    UpLink(long id, String peer, StreamObserver<Up> out) {
        this.id = id;
        this.peer = peer;
        this.out = (ServerCallStreamObserver<Up>) out;
    }

    synchronized void send(Up up) {
        if (ended || out.isCancelled()) return;
        try {
            out.onNext(up);
            sentNanos = System.nanoTime();
        } catch (RuntimeException e) {
            ended = true;
        }
    }

    /** Sends {@code pulse} when nothing went on this stream for {@code quietNanos} ({@link Pulses}). */
    synchronized void pulse(Up pulse, long now, long quietNanos) {
        if (now - sentNanos >= quietNanos) send(pulse);
    }

    /** Refuses the stream with a status naming the fault; its sessions are dropped by the worker. */
    synchronized void fail(Status status) {
        if (ended) return;
        ended = true;
        try {
            out.onError(status.asRuntimeException());
        } catch (RuntimeException ignored) {
            // the peer is gone already
        }
    }

    synchronized void complete() {
        if (ended) return;
        ended = true;
        try {
            out.onCompleted();
        } catch (RuntimeException ignored) {
            // the peer is gone already
        }
    }

    synchronized boolean ended() { return ended; }

    @Override
    public String toString() { return "link " + id + " from " + peer; }
}
