package dgr.engine.kernel;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * A dispatch's input rounded to 8 bits once for all its workers ({@link Q8Input}), instead of once
 * by each worker for itself: the caller names the input before the dispatch ({@link #begin}), then
 * every worker first claims rows of it to round, a few at a time, and waits until all rows are
 * rounded ({@link #round}). A worker that starts late finds the rows already done, so the one that
 * runs never waits for a descheduled one longer than its last claimed rows. Rounding is per
 * 32 or 256 values of a row (as the dispatch's first matrix takes them, {@link Q8Rows#span}; a matrix that takes the
 * other span rounds for itself), so who rounds which rows never changes a bit.
 */
public final class SharedRounding {
    /**
     * Batch rows from which a dispatch should share its rounding: below, a worker descheduled
     * inside its claim would hold the other up for work that costs each a few microseconds.
     */
    public static final int FROM_ROWS = 16;
    /** Batch rows per claim. */
    private static final int ROWS = 4;

    /** Set by an A/B benchmark in one JVM ({@link #shareForBenchmark}): each worker rounds for itself. Same bits. */
    private static volatile boolean heldOff;

    private final Q8Input input = new Q8Input();
    private final AtomicInteger next = new AtomicInteger(), done = new AtomicInteger();
    private float[] x;
    private int rows, cols;
    private boolean active;

    /**
     * Before a dispatch (on the caller's thread): its products that take {@code x} ({@code nRows ×
     * cols}) as 8-bit input under {@code epoch} read it from here; false when {@code kernels} does
     * not round {@code w}'s input (then this dispatch shares nothing).
     */
    public boolean begin(Kernels kernels, WeightMatrix w, float[] x, int nRows, long epoch) {
        active = !heldOff && kernels.roundsInput(w) && w.cols() % 32 == 0;
        if (!active) return false;
        this.x = x;
        this.rows = nRows;
        this.cols = w.cols();
        input.reserve(x, nRows, cols, Q8Rows.span(w.layout()), epoch);
        next.set(0);
        done.set(0);
        return true;
    }

    /** For A/B benchmarks in one JVM: false has each worker round the input for itself, as before this class. */
    public static void shareForBenchmark(boolean on) {
        heldOff = !on;
    }

    /** Before a dispatch that shares nothing: each worker rounds for itself again. */
    public void end() {
        active = false;
    }

    /** Worker side: rounds claimed rows until none are left, waits for the others' claims, then lets {@code s} use the result. */
    public void round(Scratch s) {
        if (!active) {
            s.shared = null;
            return;
        }
        long t0 = KernelAccount.start();
        for (int r0 = next.getAndAdd(ROWS); r0 < rows; r0 = next.getAndAdd(ROWS)) {
            int r1 = Math.min(rows, r0 + ROWS);
            input.roundRows(x, cols, r0, r1);
            done.addAndGet(r1 - r0);
        }
        for (int spins = 0; done.get() < rows; spins++) {
            if (spins < 2_000) Thread.onSpinWait();
            else Thread.yield();
        }
        KernelAccount.rounding(t0);
        s.shared = input;
    }
}
