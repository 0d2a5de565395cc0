package dgr.engine.deepseek4;

import dgr.engine.kernel.Scratch;
import dgr.engine.kernel.WeightMatrix;
import dgr.engine.kernel.WorkerPool;
import dgr.engine.llama.Matmuls;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Any number of matrix products over the same batch rows in one pool dispatch ({@link #begin} …
 * {@link #add} … {@link #run}): V4 has many small projections of one input (query, key, two
 * compressors, the indexer) and one output LoRA matrix per head group, and at batch 1 a dispatch's
 * barrier costs more than a small product, so they share one. Products that read what earlier ones
 * wrote join the same dispatch behind a {@link Dsv4Gate} ({@link #gate}): the step between the two
 * (a norm, a copy) runs once, on whichever worker finishes the last chunk before the gate, and
 * chunks after it wait only for chunks already claimed. Work that is not a product joins too: a
 * batch's attention rows ({@link #add(int, Task)}) and per-row steps that a prompt's rows share out
 * ({@link #rows}). Work of a few hundred KiB runs on the calling thread alone. Chunks of {@link Matmuls#chunkRows} output rows are claimed from one
 * counter; which worker computes a row never changes its bits (each output element is one kernel
 * sequence), so batch invariance holds.
 */
final class Dsv4Products implements WorkerPool.Job {
    /**
     * Work in a dispatch that is not a matrix product (a batch's attention rows): chunk {@code chunk}
     * of those {@link #add(int, Task) added} with it, run on worker {@code worker} (whose buffers it
     * may use). Where a chunk runs never changes what it computes.
     */
    @FunctionalInterface
    interface Task {
        void run(int chunk, int worker);
    }

    /** Per-row work on rows {@code [r0, r1)} of the batch. */
    @FunctionalInterface
    interface Rows {
        void run(int r0, int r1);
    }

    /** Rows per chunk of per-row work ({@link #rows}): a batch of 8 in two chunks, a prompt of 128 in 32. */
    private static final int ROWS_PER_CHUNK = 4;
    private static final Runnable NOTHING = () -> {};

    /**
     * Weight bytes × rows below which the caller computes alone: 10–20 µs of one core's work, where
     * half of it saved costs about what a dispatch and its barrier cost on an idle machine, and far
     * more when the other worker is off its core. Since a layer's products from the attention's input
     * mix to the router share one dispatch (2 MiB at batch 1 on dsv4-small), only the head's mix
     * (f32, 196 KiB) stays under it; until 2026-12-02 07:00 the output LoRA (408 KiB) and the FFN's
     * mix with the router (224 KiB) ran here, a third of a one-thread step on one core.
     */
    private static final long INLINE_WORK = 512 << 10;

    private final Matmuls mats;
    private WeightMatrix[] m = new WeightMatrix[8];
    private float[][] in = new float[8][], out = new float[8][];
    private Task[] task = new Task[8];
    private int[] firstChunk = new int[9], chunkRows = new int[8];
    private final AtomicInteger next = new AtomicInteger();
    /** Gates in order: the product index each stands before, its step, its epoch; gates[k] counts segment k's chunks. */
    private Dsv4Gate[] gates = new Dsv4Gate[0];
    private int[] gateAt = new int[4], gateEnd = new int[4];
    private Runnable[] gateStep = new Runnable[4];
    private long[] gateEpoch = new long[4];
    private int count, n, chunks, gateCount, liveGates;
    private long epoch;

    Dsv4Products(Matmuls mats) {
        this.mats = mats;
    }

    /** Starts a dispatch over {@code n} rows. */
    Dsv4Products begin(int n) {
        this.n = n;
        this.count = 0;
        this.gateCount = 0;
        return this;
    }

    /** Adds {@code out = w·in} ({@code in}: n rows of {@code w.cols()}, {@code out}: n rows of {@code w.rows()}). */
    Dsv4Products add(WeightMatrix w, float[] x, float[] y) {
        grow();
        m[count] = w;
        in[count] = x;
        out[count] = y;
        count++;
        return this;
    }

    /** Adds {@code chunks} chunks of {@code t} (none when {@code chunks} is 0), claimed like a product's. */
    Dsv4Products add(int chunks, Task t) {
        java.util.Objects.requireNonNull(t, "task");
        if (chunks == 0) return this;  // a gate then never stands behind an empty segment
        grow();
        task[count] = t;
        chunkRows[count] = chunks;  // a task's chunk count, in the slot a product keeps its rows per chunk
        count++;
        return this;
    }

    private void grow() {
        if (count < m.length) return;
        m = Arrays.copyOf(m, 2 * count);
        in = Arrays.copyOf(in, 2 * count);
        out = Arrays.copyOf(out, 2 * count);
        task = Arrays.copyOf(task, 2 * count);
        chunkRows = Arrays.copyOf(chunkRows, 2 * count);
        firstChunk = Arrays.copyOf(firstChunk, 2 * count + 1);
    }

    /**
     * Products added after this call start once every product added before it is done and then
     * {@code step} has run (once, on one worker): {@code step} turns their outputs into the later
     * products' inputs. Two gates with no product between run their steps in order as one.
     */
    Dsv4Products gate(Runnable step) {
        java.util.Objects.requireNonNull(step, "step");
        if (gateCount > 0 && gateAt[gateCount - 1] == count) {
            Runnable first = gateStep[gateCount - 1];
            gateStep[gateCount - 1] = () -> {
                first.run();
                step.run();
            };
            return this;
        }
        if (gateCount == gateAt.length) {
            gateAt = Arrays.copyOf(gateAt, 2 * gateCount);
            gateEnd = Arrays.copyOf(gateEnd, 2 * gateCount);
            gateStep = Arrays.copyOf(gateStep, 2 * gateCount);
            gateEpoch = Arrays.copyOf(gateEpoch, 2 * gateCount);
        }
        gateAt[gateCount] = count;
        gateStep[gateCount] = step;
        gateCount++;
        return this;
    }

    /**
     * Per-row work between what came before and what comes after: for a few rows a gate's step (one
     * worker), for more rows chunks of {@link #ROWS_PER_CHUNK} rows on all workers between two gates
     * (a prompt's hyper-connection mixes and norms no longer run on one core while the other waits).
     * Each row's result is the same either way.
     */
    Dsv4Products rows(int n, Rows body) {
        if (n <= ROWS_PER_CHUNK) return gate(() -> body.run(0, n));
        gate(NOTHING);
        add((n + ROWS_PER_CHUNK - 1) / ROWS_PER_CHUNK, (k, w) -> body.run(k * ROWS_PER_CHUNK, Math.min(n, (k + 1) * ROWS_PER_CHUNK)));
        return gate(NOTHING);
    }

    /** Runs the products added since {@link #begin} (and the gates' steps) and returns when all are done. */
    void run() {
        int g0 = 0;
        // Steps with no product before them run first, on the caller.
        for (; g0 < gateCount && gateAt[g0] == 0; g0++) gateStep[g0].run();
        if (count == 0) {
            Arrays.fill(gateStep, 0, gateCount, null);
            return;
        }
        long work = 0;
        firstChunk[0] = 0;
        for (int j = 0; j < count; j++) {
            if (task[j] != null) {
                firstChunk[j + 1] = firstChunk[j] + chunkRows[j];
                continue;
            }
            chunkRows[j] = Matmuls.chunkRows(m[j]);
            firstChunk[j + 1] = firstChunk[j] + (m[j].rows() + chunkRows[j] - 1) / chunkRows[j];
            work += m[j].rowBytes() * m[j].rows() * n;
        }
        chunks = firstChunk[count];
        epoch = mats.nextEpoch();
        // Gate k (after those already run) counts the chunks between the gate before it and itself.
        int live = gateCount - g0;
        if (gates.length < live) {
            Dsv4Gate[] grown = Arrays.copyOf(gates, live);
            for (int k = gates.length; k < live; k++) grown[k] = new Dsv4Gate();
            gates = grown;
        }
        for (int k = 0; k < live; k++) {
            int start = k == 0 ? 0 : gateEnd[k - 1], end = firstChunk[gateAt[g0 + k]];
            gateEnd[k] = end;
            gateEpoch[k] = mats.nextEpoch();
            gates[k].arm(end - start, gateStep[g0 + k]);
        }
        liveGates = live;
        next.set(0);
        try {
            if (work < INLINE_WORK) run(0, 1);
            else mats.pool().run(this);
        } finally {
            Arrays.fill(gateStep, 0, gateCount, null);
            Arrays.fill(in, 0, count, null);
            Arrays.fill(out, 0, count, null);
            Arrays.fill(m, 0, count, null);
            Arrays.fill(task, 0, count, null);
        }
    }

    @Override
    public void run(int worker, int workers) {
        Scratch s = mats.scratch(worker);
        s.epoch = epoch;
        int g = 0, j = 0;  // the next gate to pass, the product of the chunk
        try {
            for (int c = next.getAndIncrement(); c < chunks; c = next.getAndIncrement()) {
                for (; g < liveGates && c >= gateEnd[g]; g++) {
                    gates[g].await();
                    s.epoch = gateEpoch[g];  // inputs written behind a gate are never taken from a cache made before it
                }
                while (c >= firstChunk[j + 1]) j++;
                if (task[j] != null) {
                    task[j].run(c - firstChunk[j], worker);
                    if (g < liveGates) gates[g].chunkDone();
                    continue;
                }
                int o0 = (c - firstChunk[j]) * chunkRows[j], o1 = Math.min(m[j].rows(), o0 + chunkRows[j]);
                mats.kernels().matmul(m[j], in[j], n, out[j], o0, o1, s);
                if (g < liveGates) gates[g].chunkDone();  // c lies between gate g - 1 and gate g
            }
        } catch (RuntimeException | Error e) {
            for (int k = 0; k < liveGates; k++) gates[k].fail();
            throw e;
        }
    }
}
