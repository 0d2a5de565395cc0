package dgr.engine.kernel;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.locks.LockSupport;

/**
 * A persistent pool of platform threads that runs one {@link Job} at a time on all workers (the
 * caller is worker 0). Waiting threads spin briefly, then yield their core (on a machine shared
 * with other work the thread waited for may be off its core, and pure spinning keeps it off: llama-1b
 * Q4_0 batch 1, two builds in one JVM, faster in 97 and 103 of 150 steps, medians +4–6%; batch 4
 * faster in 33 of 60), and idle workers park after {@link #YIELD_NANOS}, so an engine that waits
 * for anything but its own next job leaves its cores to others. Dispatching allocates nothing.
 */
public final class WorkerPool implements AutoCloseable {
    /** Work split by the job itself: worker {@code w} of {@code n} does its own fixed share. */
    @FunctionalInterface
    public interface Job {
        void run(int worker, int workers);
    }

    private static final int SPINS_BEFORE_YIELD = 2_000;
    /**
     * How long an idle worker yields (after spinning) before it parks: long enough to span the
     * caller's serial work between two jobs of one forward pass, short enough that a pool whose
     * engine waits for something else (a stage waiting for its route neighbour, a scheduler between
     * iterations) gives its core back at once. It used to yield for 18,000 rounds (milliseconds, and
     * far longer when other processes want the core), which took a core from the next stage of a
     * route on the same machine: two stages of llama-1b Q4_0 at -t 2 each on 2 shared cores, c=1,
     * spent 101 CPU ms per token with that wait and 82 with this one (one node -t 2: 83 and 76;
     * means of 3 rounds, machine load ~22).
     */
    private static final long YIELD_NANOS = 100_000;

    private final int size;
    private final Thread[] threads;
    private final AtomicInteger pending = new AtomicInteger();
    private volatile int generation;
    private volatile boolean closed;
    /** Set by {@link #rest}, cleared by the next {@link #run}: idle workers park without spinning. */
    private volatile boolean resting;
    private volatile Job job;
    private volatile RuntimeException failure;
    private final AtomicIntegerArray sleeping;

    public WorkerPool(int size, String name) {
        if (size < 1) throw new IllegalArgumentException("threads must be >= 1, got " + size);
        this.size = size;
        this.threads = new Thread[size];
        this.sleeping = new AtomicIntegerArray(size);
        for (int i = 1; i < size; i++) {
            int w = i;
            Thread t = Thread.ofPlatform().daemon().name(name + "-" + i).unstarted(() -> loop(w));
            threads[i] = t;
            t.start();
        }
    }

    public int size() {
        return size;
    }

    /** Runs {@code j} on every worker and returns when all are done; rethrows a worker's failure. */
    public void run(Job j) {
        if (closed) throw new IllegalStateException("worker pool is closed");
        if (size == 1) {
            j.run(0, 1);
            return;
        }
        job = j;
        failure = null;
        pending.set(size - 1);
        resting = false;
        generation++;
        for (int i = 1; i < size; i++) if (sleeping.get(i) != 0) LockSupport.unpark(threads[i]);
        RuntimeException mine = null;
        try {
            j.run(0, size);
        } catch (RuntimeException e) {
            mine = e;
        }
        long t0 = KernelAccount.start();
        // Spin briefly, then yield: on a machine shared with other work the worker being waited for
        // may be off its core, and a caller that only spins keeps that core from it.
        for (int spins = 0; pending.get() != 0; spins++) {
            if (spins < SPINS_BEFORE_YIELD) Thread.onSpinWait();
            else Thread.yield();
        }
        KernelAccount.waiting(t0);
        job = null;
        if (mine != null) throw mine;
        if (failure != null) throw failure;
    }

    private void loop(int w) {
        int seen = 0;
        while (true) {
            long t0 = KernelAccount.start(), yieldUntil = 0;
            for (int spins = 0; generation == seen && !closed; spins++) {
                boolean rested = resting;
                if (!rested) {  // resting: nothing comes soon, straight to the park below
                    if (spins < SPINS_BEFORE_YIELD) {
                        Thread.onSpinWait();
                        continue;
                    }
                    if (spins == SPINS_BEFORE_YIELD) yieldUntil = System.nanoTime() + YIELD_NANOS;
                    if (System.nanoTime() - yieldUntil < 0) {
                        Thread.yield();
                        continue;
                    }
                }
                sleeping.set(w, 1);
                // A wake() between reading resting and here saw this worker awake and unparked no one: read it again.
                if (generation == seen && !closed && (!rested || resting)) LockSupport.park(this);
                sleeping.set(w, 0);
                spins = -1;  // woken ahead of a job (wake) or spuriously: spin and yield for it again before parking
            }
            if (closed) return;
            KernelAccount.waiting(t0);
            seen = generation;
            try {
                job.run(w, size);
            } catch (RuntimeException | Error e) {
                failure = e instanceof RuntimeException re ? re : new IllegalStateException(e);
            } finally {
                pending.decrementAndGet();
            }
        }
    }

    /**
     * Idle workers park now rather than spin and yield first, until the next {@link #run} wakes them:
     * for a caller that knows its next job waits on something slow (a route's neighbour on the same
     * cores, which a spinning worker would slow down). Any thread may call it.
     */
    public void rest() {
        if (size > 1) resting = true;
    }

    /**
     * Wakes parked workers ahead of a job that is about to come (rows for the next forward pass have
     * arrived), so they spin for it while the caller gets ready instead of waking only when it is
     * dispatched; undoes {@link #rest}. Any thread may call it.
     */
    public void wake() {
        if (size == 1) return;
        resting = false;
        for (int i = 1; i < size; i++) if (sleeping.get(i) != 0) LockSupport.unpark(threads[i]);
    }

    /** The share {@code [from, to)} of {@code n} items that worker {@code w} of {@code workers} owns. */
    public static int from(int n, int w, int workers) {
        return (int) ((long) n * w / workers);
    }

    @Override
    public void close() {
        closed = true;
        for (int i = 1; i < size; i++) LockSupport.unpark(threads[i]);
    }
}
