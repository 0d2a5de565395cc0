package dgr.engine.deepseek4;

import dgr.engine.Batch;
import dgr.engine.kernel.WeightMatrix;
import dgr.engine.kernel.WorkerPool;
import dgr.engine.llama.Matmuls;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One V4 attention sub-layer for a batch (DSV4-SPEC 2.2, 2.3): the projections for all rows
 * (two dispatches, {@link Dsv4Products}, each weight row read once for all rows), then each
 * session's rows in position order on the pool ({@link Dsv4Mixer}: window row, compressor state,
 * indexer, attention), then the grouped output LoRA.
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

    float[] run(Batch b, int n, List<Dsv4Forward.Run> runs, float[] x, Dsv4Weights.Layer L, int li) {
        int d = c.headDim(), nh = c.nHead(), hd = nh * d, rq = c.qLoraRank();
        float[] qa = new float[n * rq];
        float[] q = new float[n * hd];
        float[] kv = new float[n * d];
        Dsv4Weights.Compressor cp = L.compressor();
        Dsv4Weights.Indexer ix = L.indexer();
        float[] cv = null, cs = null, icv = null, ics = null, iq = null, iw = null;
        // Everything that reads the normed input in one dispatch, then what reads the q latent.
        Dsv4Products p = products.begin(n).add(L.qa(), x, qa).add(L.kv(), x, kv);
        if (cp != null) p.add(cp.kv(), x, cv = new float[n * cp.kv().rows()]).add(cp.gate(), x, cs = new float[n * cp.gate().rows()]);
        if (ix != null) {
            p.add(ix.proj(), x, iw = new float[n * c.idxHeads()]);
            p.add(ix.keys().kv(), x, icv = new float[n * ix.keys().kv().rows()]);
            p.add(ix.keys().gate(), x, ics = new float[n * ix.keys().gate().rows()]);
        }
        p.run();
        for (int r = 0; r < n; r++) Dsv4Kernels.rmsNorm(qa, r * rq, qa, r * rq, rq, L.qaNorm(), c.eps());
        p.begin(n).add(L.qb(), qa, q);
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
        next.set(0);
        // One session (batch 1, or one prompt): its rows run in order anyway, so no dispatch.
        if (runs.size() == 1) run(0, 1);
        else mats.pool().run(this);
        this.batch = null;
        this.runs = null;

        // Output LoRA: group g's heads through its own R_o × (H·d/G) matrix, then one projection back.
        int g = c.oGroups(), ro = c.oLoraRank(), gd = hd / g;
        float[][] groupIn = new float[g][n * gd], groupOut = new float[g][n * ro];
        for (int gi = 0; gi < g; gi++) {
            for (int r = 0; r < n; r++) System.arraycopy(att, r * hd + gi * gd, groupIn[gi], r * gd, gd);
        }
        p.begin(n);
        for (int gi = 0; gi < g; gi++) p.add(L.outA()[gi], groupIn[gi], groupOut[gi]);
        p.run();
        float[] u = new float[n * g * ro];
        for (int gi = 0; gi < g; gi++) {
            for (int r = 0; r < n; r++) System.arraycopy(groupOut[gi], r * ro, u, r * g * ro + gi * ro, ro);
        }
        float[] out = new float[n * nEmbd];
        p.begin(n).add(L.outB(), u, out).run();
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

    /** Each worker takes whole sessions: a session's rows depend on each other in order. */
    @Override
    public void run(int worker, int workers) {
        Dsv4Mixer mx = mixers[worker];
        for (int ri = next.getAndIncrement(); ri < runs.size(); ri = next.getAndIncrement()) {
            Dsv4Forward.Run run = runs.get(ri);
            Dsv4State.LayerState ls = run.state().layers[li];
            for (int r = run.start(); r < run.end(); r++) {
                int pos = batch.position(r);
                mx.store(ls, layer, r, pos, kv, comp, idxKeys);
                mx.attendRow(ls, layer, r, pos, q, iq, iw, att);
            }
        }
    }
}
