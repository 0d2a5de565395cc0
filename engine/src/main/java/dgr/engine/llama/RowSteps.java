package dgr.engine.llama;

import dgr.engine.kernel.WorkerPool;

/**
 * A forward pass's per-row steps between its matrices (norms, RoPE, K/V stores, residual adds)
 * split across the workers by rows. Run by the caller alone, they left the other workers spinning:
 * 2.5% of a 128-token prompt's wall time on 2 threads (llama-1b Q4_K_M, AMD Zen 3; its attention
 * took 3.2%), and a larger share where the matrices run faster (AMX). A row's step is the same
 * sequence whichever worker runs it, and rows write only their own elements (K/V stores included),
 * so the bits do not change.
 */
final class RowSteps implements WorkerPool.Job {
    /** One row's step; steps are created once per engine, so a pass allocates nothing. */
    @FunctionalInterface
    interface Step {
        void row(int r);
    }

    /**
     * Fewer rows than this run on the caller alone: a dispatch (a wake-up and a wait for the other
     * workers) costs about what one row's steps do, so a decode step of one or two rows would only pay it.
     */
    static final int PARALLEL_FROM_ROWS = 4;

    private final WorkerPool pool;
    private Step step;
    private int n;

    RowSteps(WorkerPool pool) {
        this.pool = pool;
    }

    /** {@code step} for rows {@code 0 .. n-1}, split across the workers where there are enough rows. */
    void run(int n, Step step) {
        if (n < PARALLEL_FROM_ROWS || pool.size() == 1) {
            for (int r = 0; r < n; r++) step.row(r);
            return;
        }
        this.step = step;
        this.n = n;
        try {
            pool.run(this);
        } finally {
            this.step = null;
        }
    }

    @Override
    public void run(int worker, int workers) {
        for (int r = WorkerPool.from(n, worker, workers), e = WorkerPool.from(n, worker + 1, workers); r < e; r++) step.row(r);
    }
}
