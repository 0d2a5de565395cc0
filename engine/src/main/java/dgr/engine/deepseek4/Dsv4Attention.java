package dgr.engine.deepseek4;

import dgr.engine.Batch;
import dgr.engine.kernel.WeightMatrix;
import dgr.engine.kernel.WorkerPool;
import dgr.engine.llama.Matmuls;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One V4 attention sub-layer for a batch (DSV4-SPEC 2.2, 2.3): the projections for all rows
 * (one dispatch, {@link Dsv4Products}, each weight row read once for all rows), then the state
 * writes of each session's rows in position order on the caller, then every row's indexer choice
 * and attention on the pool ({@link Dsv4Mixer}), then the grouped output LoRA.
 */
final class Dsv4Attention implements WorkerPool.Job {
    private final Dsv4Config c;
    private final Matmuls mats;
    private final Dsv4Rope ropeWindow, ropeCompressed;
    private final Dsv4Mixer[] mixers;
    private final Dsv4Products products;
    private final int nEmbd;
    private final AtomicInteger next = new AtomicInteger();
    // The job's inputs (set before each pool run).
    private Batch batch;
    private List<Dsv4Forward.Run> runs;
    private Dsv4Weights.Layer layer;
    private int li;
    private Proj comp, idxKeys;
    private float[] q, kv, iq, iw, att;
    /** Per batch row, from phase one: its layer state, its window rows, and how many window rows, entries and indexer keys it sees. */
    private Dsv4State.LayerState[] rowState = new Dsv4State.LayerState[0];
    private float[][] windowRows = new float[0][];
    private int[] visible = new int[0];
    private int rows;

    Dsv4Attention(Dsv4Config c, Matmuls mats, Dsv4Rope ropeWindow, Dsv4Rope ropeCompressed, int workers, boolean simd) {
        this.c = c;
        this.mats = mats;
        this.ropeWindow = ropeWindow;
        this.ropeCompressed = ropeCompressed;
        this.nEmbd = c.nEmbd();
        this.products = new Dsv4Products(mats);
        this.mixers = new Dsv4Mixer[workers];
        for (int w = 0; w < workers; w++) mixers[w] = new Dsv4Mixer(c, ropeWindow, ropeCompressed, simd);
    }

    /** A compressor's per-token values v and scores s (score includes ape[p mod ratio]). */
    record Proj(float[] v, float[] s, int width) {}

    /**
     * The sub-layer on the {@code n} rows of {@code x}; {@code first} is a dispatch begun over these
     * rows whose last gate writes {@code x} (the input mix): the projections join it.
     */
    float[] run(Batch b, int n, List<Dsv4Forward.Run> runs, float[] x, Dsv4Weights.Layer L, int li, Dsv4Products first) {
        int d = c.headDim(), nh = c.nHead(), hd = nh * d, rq = c.qLoraRank();
        float[] qa = new float[n * rq];
        float[] q = new float[n * hd];
        float[] kv = new float[n * d];
        Dsv4Weights.Compressor cp = L.compressor();
        Dsv4Weights.Indexer ix = L.indexer();
        float[] cv = null, cs = null, icv = null, ics = null, iq = null, iw = null;
        // Everything that reads the normed input, then (behind the gate that norms the q latent)
        // what reads the q latent, in one dispatch.
        Dsv4Products p = first.add(L.qa(), x, qa).add(L.kv(), x, kv);
        if (cp != null) p.add(cp.kv(), x, cv = new float[n * cp.kv().rows()]).add(cp.gate(), x, cs = new float[n * cp.gate().rows()]);
        if (ix != null) {
            p.add(ix.proj(), x, iw = new float[n * c.idxHeads()]);
            p.add(ix.keys().kv(), x, icv = new float[n * ix.keys().kv().rows()]);
            p.add(ix.keys().gate(), x, ics = new float[n * ix.keys().gate().rows()]);
        }
        p.gate(() -> {
            for (int r = 0; r < n; r++) Dsv4Kernels.rmsNorm(qa, r * rq, qa, r * rq, rq, L.qaNorm(), c.eps());
        });
        p.add(L.qb(), qa, q);
        if (ix != null) p.add(ix.qb(), qa, iq = new float[n * c.idxHeads() * c.idxDim()]);
        p.run();
        for (int r = 0; r < n; r++) {
            int pos = b.position(r);
            for (int h = 0; h < nh; h++) {
                int o = r * hd + h * d;
                Dsv4Kernels.rmsNorm(q, o, q, o, d, null, c.eps());
                (L.ratio() == 0 ? ropeWindow : ropeCompressed).apply(q, o, d, pos, false);
            }
            Dsv4Kernels.rmsNorm(kv, r * d, kv, r * d, d, L.kvNorm(), c.eps());
            (L.ratio() == 0 ? ropeWindow : ropeCompressed).apply(kv, r * d, d, pos, false);
        }
        Proj comp = cp == null ? null : withApe(b, n, cv, cs, cp);
        Proj idxKeys = ix == null ? null : withApe(b, n, icv, ics, ix.keys());
        if (ix != null) {
            int hi = c.idxHeads(), di = c.idxDim();
            float inv = (float) (1.0 / Math.sqrt((double) di * hi));
            for (int r = 0; r < n; r++) {
                for (int h = 0; h < hi; h++) {
                    ropeCompressed.apply(iq, (r * hi + h) * di, di, b.position(r), false);
                    iw[r * hi + h] *= inv;
                }
            }
        }
        float[] att = new float[n * hd];
        this.batch = b;
        this.runs = runs;
        this.layer = L;
        this.li = li;
        this.comp = comp;
        this.idxKeys = idxKeys;
        this.q = q;
        this.kv = kv;
        this.iq = iq;
        this.iw = iw;
        this.att = att;
        // Phase one, on the caller, row by row in each session's order: the state writes (window
        // row, compressor rings, the entries of blocks completed) and what each row may see then.
        int nSwa = c.nSwa();
        if (rowState.length < n) {
            rowState = new Dsv4State.LayerState[n];
            visible = new int[3 * n];
        }
        if (windowRows.length < n * nSwa) windowRows = new float[n * nSwa][];
        Dsv4Mixer writer = mixers[0];
        for (Dsv4Forward.Run run : runs) {
            Dsv4State.LayerState ls = run.state().layers[li];
            for (int r = run.start(); r < run.end(); r++) {
                int pos = b.position(r);
                writer.store(ls, L, r, pos, kv, comp, idxKeys);
                int w0 = Math.max(0, pos - nSwa + 1);
                for (int t = w0; t <= pos; t++) windowRows[r * nSwa + t - w0] = ls.window[t % nSwa];
                rowState[r] = ls;
                visible[3 * r] = pos - w0 + 1;
                visible[3 * r + 1] = ls.entries.size();
                visible[3 * r + 2] = ls.idxKeys.size();
            }
        }
        // Phase two: every row's attention at once, rows shared out among the workers.
        rows = n;
        next.set(0);
        if (n == 1) run(0, 1);
        else mats.pool().run(this);
        this.batch = null;
        this.runs = null;
        Arrays.fill(rowState, 0, n, null);
        Arrays.fill(windowRows, 0, n * nSwa, null);

        // Output LoRA: group g's heads through its own R_o × (H·d/G) matrix, then one projection back.
        int g = c.oGroups(), ro = c.oLoraRank(), gd = hd / g;
        float[][] groupIn = new float[g][n * gd], groupOut = new float[g][n * ro];
        for (int gi = 0; gi < g; gi++) {
            for (int r = 0; r < n; r++) System.arraycopy(att, r * hd + gi * gd, groupIn[gi], r * gd, gd);
        }
        p = products.begin(n);
        for (int gi = 0; gi < g; gi++) p.add(L.outA()[gi], groupIn[gi], groupOut[gi]);
        float[] u = new float[n * g * ro];
        p.gate(() -> {
            for (int gi = 0; gi < g; gi++) {
                for (int r = 0; r < n; r++) System.arraycopy(groupOut[gi], r * ro, u, r * g * ro + gi * ro, ro);
            }
        });
        float[] out = new float[n * nEmbd];
        p.add(L.outB(), u, out).run();
        return out;
    }

    private static Proj withApe(Batch b, int n, float[] v, float[] s, Dsv4Weights.Compressor cp) {
        int cw = cp.kv().rows();
        for (int r = 0; r < n; r++) {
            int ao = cp.ape().off() + (b.position(r) % cp.ratio()) * cw;
            for (int i = 0; i < cw; i++) s[r * cw + i] += cp.ape().w()[ao + i];
        }
        return new Proj(v, s, cw);
    }

    /**
     * Rows claimed one at a time: each sees exactly the window rows and compressed entries phase
     * one recorded for it (window rows are new arrays per position and entries are only appended,
     * so what later rows of the batch wrote cannot reach it).
     */
    @Override
    public void run(int worker, int workers) {
        Dsv4Mixer mx = mixers[worker];
        int nSwa = c.nSwa();
        for (int r = next.getAndIncrement(); r < rows; r = next.getAndIncrement()) {
            mx.attendRow(rowState[r], layer, r, batch.position(r), windowRows, r * nSwa, visible[3 * r], visible[3 * r + 1],
                    visible[3 * r + 2], q, iq, iw, att);
        }
    }
}
