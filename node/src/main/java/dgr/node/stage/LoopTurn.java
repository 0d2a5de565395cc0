package dgr.node.stage;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Runs a stage loop's body on one thread at a time: its own thread, woken when work comes and every
 * tick, or, for work that may run {@code inline}, the thread that brought it (a transport thread)
 * when no one runs the body at that moment.
 *
 * <p>Why: on a decode row's round trip each thread hand-off is a wake-up, and on a virtual machine a
 * wake-up of an idle core costs 0.1-0.5 ms. A row that reaches an idle last stage is computed on the
 * gRPC thread that read it, and its token is written from there: two hand-offs (to the stage's
 * thread, and back to the transport's) fewer per token. The body drains what all threads queued,
 * in order, so taking it inline never reorders anyone's work; work that finds the body taken
 * (another link's rows, a tick) wakes the loop's thread, and is done by whichever turn drains the
 * queue next (the running one, if it has not finished draining).
 *
 * <p>Work that comes within {@code backToBack} of an inline body's end goes to the loop's thread too:
 * gRPC delivers messages read together one after another before its transport thread writes
 * anything, so computing the second one inline would hold the first one's token (written by that
 * thread only once it returns) for a whole batch; on a route with micro-batches in flight that is
 * the next batch's wait.
 */
final class LoopTurn implements AutoCloseable {
    private final ReentrantLock turn = new ReentrantLock();
    private final Runnable body;
    private final long tickNanos, backToBackNanos;
    private final Thread thread;
    private volatile boolean closed;
    /** When the last inline body ended ({@link System#nanoTime}). */
    private volatile long inlineEnded;

    LoopTurn(String name, long tickMillis, long backToBackNanos, Runnable body) {
        this.body = body;
        this.tickNanos = TimeUnit.MILLISECONDS.toNanos(tickMillis);
        this.backToBackNanos = backToBackNanos;
        this.inlineEnded = System.nanoTime() - backToBackNanos;
        this.thread = Thread.ofPlatform().name(name).daemon(true).start(this::loop);
    }

    private void loop() {
        while (!closed) {
            LockSupport.parkNanos(this, tickNanos);  // returns at once when work came meanwhile (its unpark)
            runTurn();
        }
    }

    private void runTurn() {
        turn.lock();
        try {
            if (!closed) body.run();
        } finally {
            turn.unlock();
        }
    }

    /**
     * Work was queued: runs the body on this thread when {@code inline}, no one runs it now and no
     * inline body ended just before; otherwise wakes the loop's thread (a body that runs now may have
     * drained the queue before this work came).
     */
    void arrived(boolean inline) {
        // Not from inside the body (tryLock would succeed for its own thread and start a second turn within it).
        if (inline && !turn.isHeldByCurrentThread() && System.nanoTime() - inlineEnded >= backToBackNanos && turn.tryLock()) {
            try {
                if (!closed) body.run();
            } finally {
                inlineEnded = System.nanoTime();
                turn.unlock();
            }
            return;
        }
        LockSupport.unpark(thread);
    }

    /** Stops the loop's thread and waits for a body running inline; no body runs after. */
    @Override
    public void close() {
        closed = true;
        thread.interrupt();
        try {
            thread.join(5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        turn.lock();
        turn.unlock();
    }
}
