package dgr.engine.llama;

import dgr.engine.kernel.Kernels;
import dgr.engine.kernel.Scratch;
import dgr.engine.kernel.SharedRounding;
import dgr.engine.kernel.WeightMatrix;
import dgr.engine.kernel.WorkerPool;
import java.util.concurrent.atomic.AtomicIntegerArray;

/**
 * The forward pass's workers and the matrix products they share out: up to three products over
 * the same batch rows per pool dispatch ({@link #begin} … {@link #add} … {@link #run()}), or a
 * gate and an up product with SwiGLU after each chunk ({@link #swiglu}).
 *
 * <p>Output rows are handed out in chunks of {@link #chunkRows}, claimed one at a time rather than
 * as fixed shares: on a machine shared with other work one worker is often descheduled, and the
 * other then takes over its rows instead of waiting. Which worker computes a row never changes its
 * bits (each output element is one kernel sequence), so batch invariance holds.
 *
 * <p>Every job of the pass (these products, the experts' passes, latent attention's per-head
 * products) takes its epoch from {@link #nextEpoch}, one counter, so no two jobs share one and no
 * kernel reuses an input it prepared for another job ({@link Scratch#epoch}).
 *
 * <p>Public for the DeepSeek-V4 engine, which shares these products and their claims.
 */
public final class Matmuls {
    private final Kernels kernels;
    private final WorkerPool pool;
    private final Scratch[] scratch;
    private long epochs;

    private int n, products;
    private boolean swiglu, gelu;
    private float[] hb;
    private final WeightMatrix[] m = new WeightMatrix[3];
    private final float[][] in = new float[3][];
    private final float[][] out = new float[3][];
    private final int[] firstChunk = new int[4];
    private final int[] chunkRows = new int[3];
    /**
     * Chunks are split into one contiguous segment per worker; a worker claims from its own
     * segment first and then from the others', so each streams contiguous weights while a
     * descheduled worker's rows are still taken over.
     */
    private final AtomicIntegerArray cursor;
    /** Segment ends: written in {@link #run()} before the pool publishes the job, then only read. */
    private final int[] segEnd;
    /**
     * Each claimable chunk's product and output rows {@code [from, to)}, in segment order; written in {@link #run()}
     * like {@link #segEnd}. Grown, never shrunk, when a dispatch has more chunks than any before it.
     */
    private int[] chunkProduct = new int[0], chunkFrom = new int[0], chunkTo = new int[0];
    /**
     * Each segment's last chunk is claimed in this many pieces (of 16 rows at least): the dispatch ends when
     * the last claim does, and a worker that finishes first waits for the other's, about half a claim
     * on average, so the claims near the end are made small. Near the start they stay large, as a
     * claim's weights are one prefetched stream.
     */
    static final int TAIL_PIECES = 4;
    private long epoch;
    /** A prompt chunk's input rounded to 8 bits once for all workers rather than by each. */
    private final SharedRounding rounding = new SharedRounding();
    private final WorkerPool.Job job = this::work;

    public Matmuls(Kernels kernels, WorkerPool pool, Scratch[] scratch) {
        this.kernels = kernels;
        this.pool = pool;
        this.scratch = scratch;
        this.cursor = new AtomicIntegerArray(scratch.length);
        this.segEnd = new int[scratch.length];
    }

    public Kernels kernels() { return kernels; }

    public WorkerPool pool() { return pool; }

    /** Worker {@code w}'s buffers. */
    public Scratch scratch(int w) { return scratch[w]; }

    /** A fresh epoch for a job whose inputs may have been rewritten since the last. */
    public long nextEpoch() { return ++epochs; }

    /** Bytes the workers' scratch holds now. */
    public long scratchBytes() {
        long bytes = 0;
        for (Scratch s : scratch) bytes += s.bytes();
        return bytes;
    }

    /** {@code out = m·in} for {@code n} rows. */
    public void run(int n, WeightMatrix m, float[] in, float[] out) {
        begin(n).add(m, in, out).run();
    }

    /** Starts a dispatch of up to three products over the same {@code n} rows. */
    public Matmuls begin(int n) {
        this.n = n;
        this.products = 0;
        this.swiglu = false;
        return this;
    }

    /** Adds {@code out = m·in} to the dispatch begun last. */
    public Matmuls add(WeightMatrix m, float[] in, float[] out) {
        if (products == 3) throw new IllegalStateException("a dispatch holds at most three products");
        this.m[products] = m;
        this.in[products] = in;
        this.out[products] = out;
        products++;
        return this;
    }

    /** Runs the products added since {@link #begin} and returns when all are done. */
    public void run() {
        for (int j = products; j < 3; j++) {
            m[j] = null;
            in[j] = null;
            out[j] = null;
        }
        epoch = nextEpoch();
        // Batch rows from 16 (prompt chunks): there rounding is worth sharing; a decode step's is a few microseconds.
        if (n < SharedRounding.FROM_ROWS || !rounding.begin(kernels, m[0], in[0], n, epoch)) rounding.end();
        // Gate and up are claimed together (one chunk = the same rows of both) so SwiGLU can follow at once.
        int parts = swiglu ? 1 : 3;
        firstChunk[0] = 0;
        for (int j = 0; j < 3; j++) {
            chunkRows[j] = m[j] == null ? 1 : chunkRows(m[j]);
            int c = j < parts && m[j] != null ? (m[j].rows() + chunkRows[j] - 1) / chunkRows[j] : 0;
            firstChunk[j + 1] = firstChunk[j] + c;
        }
        int total = firstChunk[3], ws = scratch.length;
        if (chunkProduct.length < total + ws * (TAIL_PIECES - 1)) {
            int size = total + ws * (TAIL_PIECES - 1);
            chunkProduct = new int[size];
            chunkFrom = new int[size];
            chunkTo = new int[size];
        }
        int claims = 0;
        for (int w = 0; w < ws; w++) {
            cursor.set(w, claims);
            for (int c = (int) ((long) total * w / ws), end = (int) ((long) total * (w + 1) / ws); c < end; c++) {
                int j = c < firstChunk[1] ? 0 : c < firstChunk[2] ? 1 : 2;
                int o0 = (c - firstChunk[j]) * chunkRows[j], o1 = Math.min(m[j].rows(), o0 + chunkRows[j]);
                // The segment's last chunk in at most TAIL_PIECES pieces, each a multiple of 16 rows (so pieces start at row groups too).
                int piece = c == end - 1 ? (chunkRows[j] + TAIL_PIECES - 1) / TAIL_PIECES + 15 & ~15 : o1 - o0;
                for (int p = o0; p < o1; p += piece, claims++) {
                    chunkProduct[claims] = j;
                    chunkFrom[claims] = p;
                    chunkTo[claims] = Math.min(o1, p + piece);
                }
            }
            segEnd[w] = claims;
        }
        pool.run(job);
    }

    /**
     * {@code gateOut = gate·in}, {@code upOut = up·in}, then {@code hb = act(gateOut)·upOut} per
     * chunk as soon as both of its products are there ({@link Elementwise#swiglu}).
     */
    void swiglu(int n, WeightMatrix gate, WeightMatrix up, float[] in, float[] gateOut, float[] upOut, float[] hb,
                boolean gelu) {
        begin(n).add(gate, in, gateOut).add(up, in, upOut);
        this.swiglu = true;
        this.gelu = gelu;
        this.hb = hb;
        run();
    }

    private int claim(int worker) {
        int ws = segEnd.length;
        for (int k = 0; k < ws; k++) {
            int seg = (worker + k) % ws;
            if (cursor.get(seg) >= segEnd[seg]) continue;
            int c = cursor.getAndIncrement(seg);
            if (c < segEnd[seg]) return c;
        }
        return -1;
    }

    private void work(int worker, int workers) {
        Scratch s = scratch[worker];
        s.epoch = epoch;
        rounding.round(s);
        for (int c = claim(worker); c >= 0; c = claim(worker)) {
            int j = chunkProduct[c], rows = m[j].rows(), o0 = chunkFrom[c], o1 = chunkTo[c];
            kernels.matmul(m[j], in[j], n, out[j], o0, o1, s);
            if (swiglu) {
                kernels.matmul(m[1], in[1], n, out[1], o0, o1, s);
                Elementwise.swiglu(gelu, out[0], out[1], hb, n, rows, o0, o1);
            }
        }
    }

    /**
     * Output rows per claim for {@code w}: about 144 KiB of weights, 16 to 256 rows, and at most
     * an eighth of the matrix so both workers always share it (which also keeps small test models
     * split across workers). Bigger claims than the former fixed 32 rows cut the per-claim
     * overhead at batch 1 (paired runs in one JVM on llama-1b Q4_0: median 14.9 against 13.8
     * tok/s), while a claim still fits L2 so batch groups after the first reread it from there
     * (2048 columns: 128 rows; 8192: 32). A multiple of 16, so claims start at the row groups of
     * the 8-bit layouts ({@link dgr.engine.kernel.WeightLayout#rowGroup}; a claim that cut one
     * would have both workers compute its rows, each writing its own).
     */
    public static int chunkRows(WeightMatrix w) {
        return (int) Math.max(16, Math.min(Math.min(256, w.rows() / 8), (144L << 10) / w.rowBytes()) & ~15);
    }

    /**
     * Output rows per claim in an expert pass: about 144 KiB of weights, as {@link #chunkRows}, but
     * without its eighth-of-the-matrix cap: the pass holds every chosen expert's rows, so workers
     * share it anyway, and an expert's matrix is small (a 36 KiB claim streamed too little at once).
     */
    public static int expertChunkRows(WeightMatrix w) {
        return (int) Math.min(w.rows(), Math.max(16, (144L << 10) / w.rowBytes()) & ~15);
    }
}
