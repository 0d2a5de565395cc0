package dgr.engine.deepseek4;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * The point inside one pool dispatch where work that reads earlier work's outputs may start, so
 * two dependent steps share one dispatch instead of two: {@link #chunkDone} counts the chunks
 * before it down, and the worker that finishes the last one runs the step between (a norm, a copy)
 * and opens the gate. Chunks are claimed from one counter in order, so a worker that reaches the
 * gate waits only for chunks another worker already holds, never for unclaimed ones (a lone
 * worker never waits). A worker that fails marks the gate broken, so nobody waits for ever.
 */
final class Dsv4Gate {
    private final AtomicInteger left = new AtomicInteger();
    private volatile int state;  // 0 closed, 1 open, 2 broken
    private Runnable step;

    /** Closes the gate behind the first {@code chunksBefore} chunks; {@code step} (may be null) runs before it opens. */
    void arm(int chunksBefore, Runnable step) {
        this.step = step;
        left.set(chunksBefore);
        state = 0;
    }

    /** One chunk before the gate is done; the last one runs the step and opens the gate. */
    void chunkDone() {
        if (left.decrementAndGet() != 0) return;
        try {
            if (step != null) step.run();
        } catch (RuntimeException | Error e) {
            state = 2;
            throw e;
        }
        step = null;
        state = 1;
    }

    /** A chunk failed: whoever waits at the gate gives up instead of waiting for it. */
    void fail() {
        state = 2;
    }

    /** Returns once the gate is open (spinning briefly, then yielding the core). */
    void await() {
        for (int spins = 0; state == 0; spins++) {
            if (spins < 2_000) Thread.onSpinWait();
            else Thread.yield();
        }
        if (state == 2) throw new IllegalStateException("work before the gate failed on another worker");
    }
}
