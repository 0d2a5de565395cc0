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
 * chunks after it wait only for chunks already claimed. Work of a few hundred KiB runs on the
 * calling thread alone. Chunks of {@link Matmuls#chunkRows} output rows are claimed from one
 * counter; which worker computes a row never changes its bits (each output element is one kernel
 * sequence), so batch invariance holds.
 */
final class Dsv4Products implements WorkerPool.Job {
    /**
     * Weight bytes × rows below which the caller computes alone. At batch 1 this keeps the
     * hyper-connection mixes' f32 products (192 KiB on dsv4-small), and the grouped output LoRA with
     * its projection back (408 KiB in Q8_0) on the caller: 10–20 µs of one core's work, so half of
     * it saved costs about what a dispatch and its barrier cost on an idle machine, and far more
     * when the other worker is off its core. Per layer at batch 1 two dispatches remain: the
     * attention projections (1.1 MiB) and the experts.
     */
    private static final long INLINE_WORK = 512 << 10;

    private final Matmuls mats;
    private WeightMatrix[] m = new WeightMatrix[8];
    private float[][] in = new float[8][], out = new float[8][];
    private int[] firstChunk = new int[9], chunkRows = new int[8];
    private final AtomicInteger next = new AtomicInteger();
    private final Dsv4Gate gate = new Dsv4Gate();
    private int count, n, chunks, gateAt;
    private Runnable gateStep;
    private long epoch, gateEpoch;

    Dsv4Products(Matmuls mats) {
        this.mats = mats;
    }

    /** Starts a dispatch over {@code n} rows. */
    Dsv4Products begin(int n) {
        this.n = n;
        this.count = 0;
        this.gateAt = -1;
        this.gateStep = null;
        return this;
    }

    /** Adds {@code out = w·in} ({@code in}: n rows of {@code w.cols()}, {@code out}: n rows of {@code w.rows()}). */
    Dsv4Products add(WeightMatrix w, float[] x, float[] y) {
        if (count == m.length) {
            m = Arrays.copyOf(m, 2 * count);
            in = Arrays.copyOf(in, 2 * count);
            out = Arrays.copyOf(out, 2 * count);
            chunkRows = Arrays.copyOf(chunkRows, 2 * count);
            firstChunk = Arrays.copyOf(firstChunk, 2 * count + 1);
        }
        m[count] = w;
        in[count] = x;
        out[count] = y;
        count++;
        return this;
    }

    /**
     * Products added after this call start once every product added before it is done and then
     * {@code step} has run (once, on one worker): {@code step} turns their outputs into the later
     * products' inputs. One gate per dispatch.
     */
    Dsv4Products gate(Runnable step) {
        if (gateAt >= 0) throw new IllegalStateException("one gate per dispatch");
        gateAt = count;
        gateStep = java.util.Objects.requireNonNull(step, "step");
        return this;
    }

    /** Runs the products added since {@link #begin} and returns when all are done. */
    void run() {
        if (count == 0) {
            if (gateStep != null) gateStep.run();
            return;
        }
        long work = 0;
        firstChunk[0] = 0;
        for (int j = 0; j < count; j++) {
            chunkRows[j] = Matmuls.chunkRows(m[j]);
            firstChunk[j + 1] = firstChunk[j] + (m[j].rows() + chunkRows[j] - 1) / chunkRows[j];
            work += m[j].rowBytes() * m[j].rows() * n;
        }
        chunks = firstChunk[count];
        epoch = mats.nextEpoch();
        if (gateAt == 0) {  // nothing before the gate: its step runs first, on the caller
            gateStep.run();
            gateStep = null;
        }
        int gateChunk = gateStep == null ? chunks : firstChunk[gateAt];
        if (gateStep != null) gateEpoch = mats.nextEpoch();
        gate.arm(gateChunk, gateStep);
        next.set(0);
        try {
            if (work < INLINE_WORK) run(0, 1);
            else mats.pool().run(this);
        } finally {
            gateStep = null;
            Arrays.fill(in, 0, count, null);
            Arrays.fill(out, 0, count, null);
            Arrays.fill(m, 0, count, null);
        }
    }

    @Override
    public void run(int worker, int workers) {
        Scratch s = mats.scratch(worker);
        s.epoch = epoch;
        int gateChunk = gate.chunksBefore();
        boolean through = false;
        int j = 0;
        for (int c = next.getAndIncrement(); c < chunks; c = next.getAndIncrement()) {
            if (c >= gateChunk && !through) {
                gate.await();
                s.epoch = gateEpoch;  // inputs written behind the gate are never taken from a cache made before it
                through = true;
            }
            while (c >= firstChunk[j + 1]) j++;
            int o0 = (c - firstChunk[j]) * chunkRows[j], o1 = Math.min(m[j].rows(), o0 + chunkRows[j]);
            try {
                mats.kernels().matmul(m[j], in[j], n, out[j], o0, o1, s);
            } catch (RuntimeException | Error e) {
                gate.fail();
                throw e;
            }
            if (c < gateChunk) gate.chunkDone();
        }
    }
}
