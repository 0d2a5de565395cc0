package dgr.engine.deepseek4;

import dgr.engine.Batch;
import dgr.engine.llama.ExpertGroups;
import dgr.engine.kernel.WeightMatrix;
import java.util.Arrays;
import java.util.List;

/**
 * One V4 attention sub-layer for a batch (DSV4-SPEC 2.2, 2.3), added to the caller's dispatch
 * ({@link Dsv4Products}) behind the input mix: the projections for all rows (each weight row read
 * once for all rows); behind a gate the state writes of each session's rows in position order; then
 * every row's indexer choice and attention as chunks of the same dispatch ({@link Dsv4Mixer}, at
 * batch 1 the heads split among the workers); then the grouped output LoRA. A batch-1 layer so runs
 * on both workers from the input mix to the router, where the attention and the output LoRA used to
 * run on the caller alone.
 */
final class Dsv4Attention {
    private final Dsv4Config c;
    private final Dsv4Rope ropeWindow, ropeCompressed;
    private final Dsv4Mixer[] mixers;
    private final int nEmbd;
    // What the attention chunks read (set by the gate step before them, cleared by the one after).
    private Batch batch;
    private Dsv4Weights.Layer layer;
    private int headGroups;
    /**
     * The sub-layer's buffers (row-major, one row per batch row), reused by every layer and pass and grown to
     * the widest layer and most rows asked so far: the q latent and heads, the key, the compressor's and the
     * indexer's values and scores, the indexer's weights and queries, the heads' outputs, each head group's
     * input and output of the output LoRA, their join and the sub-layer's output.
     */
    private float[] qaBuf, qBuf, kvBuf, cvBuf, csBuf, icvBuf, icsBuf, iwBuf, iqBuf, attBuf, uBuf, outBuf;
    private final float[][] groupInBuf, groupOutBuf;
    /** Per batch row, from phase one: its layer state, its window rows, and how many window rows, entries and indexer keys it sees. */
    private Dsv4State.LayerState[] rowState = new Dsv4State.LayerState[0];
    private float[][] windowRows = new float[0][];
    private int[] visible = new int[0];
    /**
     * At batch 1 on a layer with an indexer: its sort keys per visible block and its choice (first
     * {@code chosenCount}), made once for all workers; {@code sharedChoice} while such a layer is in flight.
     */
    private long[] order = new long[64];
    private int[] chosen = new int[64];
    private int chosenCount;
    private boolean sharedChoice;

    Dsv4Attention(Dsv4Config c, Dsv4Rope ropeWindow, Dsv4Rope ropeCompressed, int workers, boolean simd) {
        this.c = c;
        this.ropeWindow = ropeWindow;
        this.ropeCompressed = ropeCompressed;
        this.nEmbd = c.nEmbd();
        this.mixers = new Dsv4Mixer[workers];
        for (int w = 0; w < workers; w++) mixers[w] = new Dsv4Mixer(c, ropeWindow, ropeCompressed, simd);
        this.groupInBuf = new float[c.oGroups()][];
        this.groupOutBuf = new float[c.oGroups()][];
    }

    /** A compressor's per-token values v and scores s (score includes ape[p mod ratio]). */
    record Proj(float[] v, float[] s, int width) {}

    /**
     * Adds the sub-layer on the {@code n} rows of {@code x} to {@code p}, a dispatch begun over these
     * rows whose last gate writes {@code x} (the input mix); returns the array the sub-layer's output
     * ({@code n × n_embd}) will be in once {@code p} has run.
     */
    float[] add(Batch b, int n, List<Dsv4Forward.Run> runs, float[] x, Dsv4Weights.Layer L, int li, Dsv4Products p) {
        int d = c.headDim(), nh = c.nHead(), hd = nh * d, rq = c.qLoraRank();
        float[] qa = qaBuf = ExpertGroups.grow(qaBuf, n * rq);
        float[] q = qBuf = ExpertGroups.grow(qBuf, n * hd);
        float[] kv = kvBuf = ExpertGroups.grow(kvBuf, n * d);
        Dsv4Weights.Compressor cp = L.compressor();
        Dsv4Weights.Indexer ix = L.indexer();
        float[] cv = cp == null ? null : (cvBuf = ExpertGroups.grow(cvBuf, n * cp.kv().rows()));
        float[] cs = cp == null ? null : (csBuf = ExpertGroups.grow(csBuf, n * cp.gate().rows()));
        float[] icv = ix == null ? null : (icvBuf = ExpertGroups.grow(icvBuf, n * ix.keys().kv().rows()));
        float[] ics = ix == null ? null : (icsBuf = ExpertGroups.grow(icsBuf, n * ix.keys().gate().rows()));
        float[] iw = ix == null ? null : (iwBuf = ExpertGroups.grow(iwBuf, n * c.idxHeads()));
        float[] iq = ix == null ? null : (iqBuf = ExpertGroups.grow(iqBuf, n * c.idxHeads() * c.idxDim()));
        // Everything that reads the normed input, then (behind the gate that norms the q latent)
        // what reads the q latent.
        p.add(L.qa(), x, qa).add(L.kv(), x, kv);
        if (cp != null) p.add(cp.kv(), x, cv).add(cp.gate(), x, cs);
        if (ix != null) p.add(ix.proj(), x, iw).add(ix.keys().kv(), x, icv).add(ix.keys().gate(), x, ics);
        p.gate(() -> {
            for (int r = 0; r < n; r++) Dsv4Kernels.rmsNorm(qa, r * rq, qa, r * rq, rq, L.qaNorm(), c.eps());
        });
        p.add(L.qb(), qa, q);
        if (ix != null) p.add(ix.qb(), qa, iq);
        // Phase one, one worker, row by row in each session's order: norms and rope, then the state
        // writes (window row, compressor rings, the entries of blocks completed) and what each row may see.
        float[] att = attBuf = ExpertGroups.grow(attBuf, n * hd);  // each head's rows zeroed before its sums (Dsv4Mixer.attendRow)
        int groups = n == 1 ? Math.min(mixers.length, nh) : 1;
        boolean shared = groups > 1 && ix != null && L.ratio() == 4;
        p.rows(n, (r0, r1) -> prepare(b, r0, r1, L, q, kv, iq, iw));
        p.gate(() -> {
            store(b, n, runs, L, li, kv, cp == null ? null : withApe(b, n, cv, cs, cp), ix == null ? null : withApe(b, n, icv, ics, ix.keys()));
            this.batch = b;
            this.layer = L;
            this.headGroups = groups;
            this.sharedChoice = shared;
            if (order.length < visible[2]) order = new long[Math.max(visible[2], 2 * order.length)];
            if (chosen.length < c.idxTopK()) chosen = new int[c.idxTopK()];
        });
        // At batch 1 on an indexer's layer the heads' groups share one block choice: each worker scores
        // its share of the blocks, and behind a gate one picks the top k (each worker chose for itself before,
        // all the blocks: on long contexts the indexer's CPU doubled).
        if (shared) {
            p.add(groups, this::scoreBlocks);
            p.gate(() -> chosenCount = Dsv4Mixer.pick(order, visible[2], c.idxTopK(), chosen));
        }
        // Phase two: every row's attention (at batch 1 its heads in groups), chunks shared out among the workers.
        p.add(n * groups, this::attend);

        // Output LoRA: group g's heads through its own R_o × (H·d/G) matrix, then one projection back.
        int g = c.oGroups(), ro = c.oLoraRank(), gd = hd / g;
        for (int gi = 0; gi < g; gi++) {
            groupInBuf[gi] = ExpertGroups.grow(groupInBuf[gi], n * gd);
            groupOutBuf[gi] = ExpertGroups.grow(groupOutBuf[gi], n * ro);
        }
        float[][] groupIn = groupInBuf, groupOut = groupOutBuf;
        p.gate(() -> {
            release(n);
            for (int gi = 0; gi < g; gi++) {
                for (int r = 0; r < n; r++) System.arraycopy(att, r * hd + gi * gd, groupIn[gi], r * gd, gd);
            }
        });
        for (int gi = 0; gi < g; gi++) p.add(L.outA()[gi], groupIn[gi], groupOut[gi]);
        float[] u = uBuf = ExpertGroups.grow(uBuf, n * g * ro);
        p.gate(() -> {
            for (int gi = 0; gi < g; gi++) {
                for (int r = 0; r < n; r++) System.arraycopy(groupOut[gi], r * ro, u, r * g * ro + gi * ro, ro);
            }
        });
        float[] out = outBuf = ExpertGroups.grow(outBuf, n * nEmbd);
        p.add(L.outB(), u, out);
        return out;
    }

    /** Bytes of the sub-layer's buffers and its workers' ({@link Dsv4Mixer#bytes}); references at 4 bytes. */
    long bytes() {
        long floats = 0;
        for (float[] a : new float[][] {qaBuf, qBuf, kvBuf, cvBuf, csBuf, icvBuf, icsBuf, iwBuf, iqBuf, attBuf, uBuf, outBuf}) {
            floats += a == null ? 0 : a.length;
        }
        for (float[][] group : new float[][][] {groupInBuf, groupOutBuf}) {
            for (float[] a : group) floats += a == null ? 0 : a.length;
        }
        long bytes = 4 * floats + 4L * (rowState.length + windowRows.length + visible.length + chosen.length) + 8L * order.length;
        for (Dsv4Mixer m : mixers) bytes += m.bytes();
        return bytes;
    }

    /** Per row: q's heads normed and roped, the key normed and roped, the indexer's queries roped and weights scaled. */
    private void prepare(Batch b, int r0, int r1, Dsv4Weights.Layer L, float[] q, float[] kv, float[] iq, float[] iw) {
        int d = c.headDim(), nh = c.nHead(), hd = nh * d;
        Dsv4Rope rope = L.ratio() == 0 ? ropeWindow : ropeCompressed;
        for (int r = r0; r < r1; r++) {
            int pos = b.position(r);
            for (int h = 0; h < nh; h++) {
                int o = r * hd + h * d;
                Dsv4Kernels.rmsNorm(q, o, q, o, d, null, c.eps());
                rope.apply(q, o, d, pos, false);
            }
            Dsv4Kernels.rmsNorm(kv, r * d, kv, r * d, d, L.kvNorm(), c.eps());
            rope.apply(kv, r * d, d, pos, false);
        }
        if (iq != null) {
            int hi = c.idxHeads(), di = c.idxDim();
            float inv = (float) (1.0 / Math.sqrt((double) di * hi));
            for (int r = r0; r < r1; r++) {
                for (int h = 0; h < hi; h++) {
                    ropeCompressed.apply(iq, (r * hi + h) * di, di, b.position(r), false);
                    iw[r * hi + h] *= inv;
                }
            }
        }
    }

    /** The state writes of each session's rows in position order, and what each row may see after its own. */
    private void store(Batch b, int n, List<Dsv4Forward.Run> runs, Dsv4Weights.Layer L, int li, float[] kv, Proj comp, Proj idxKeys) {
        int nSwa = c.nSwa();
        if (rowState.length < n) {
            rowState = new Dsv4State.LayerState[n];
            visible = new int[3 * n];
        }
        if (windowRows.length < n * nSwa) windowRows = new float[n * nSwa][];
        Dsv4Mixer writer = mixers[0];  // store() uses no per-worker buffer but the compressor's, and runs alone
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
    }

    private void release(int n) {
        batch = null;
        layer = null;
        Arrays.fill(rowState, 0, n, null);
        Arrays.fill(windowRows, 0, n * c.nSwa(), null);
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
     * Chunk {@code k}: row {@code k / headGroups}, its heads of group {@code k % headGroups}. Each
     * sees exactly the window rows and compressed entries phase one recorded for it (window rows
     * are new arrays per position and entries are only appended, so what later rows of the batch
     * wrote cannot reach it); a head's sums do not depend on which other heads share its chunk.
     */
    private void attend(int k, int worker) {
        int r = k / headGroups, hg = k % headGroups, nh = c.nHead(), nSwa = c.nSwa();
        boolean indexer = layer.indexer() != null;  // the indexer's buffers hold another layer's rows where this one has none
        mixers[worker].attendRow(rowState[r], layer, r, batch.position(r), windowRows, r * nSwa, visible[3 * r], visible[3 * r + 1],
                visible[3 * r + 2], qBuf, indexer ? iqBuf : null, indexer ? iwBuf : null, attBuf, nh * hg / headGroups,
                nh * (hg + 1) / headGroups, sharedChoice ? chosen : null, chosenCount);
    }

    /** Chunk {@code k} of {@code headGroups}: the batch's one row's indexer scores of its share of the visible blocks. */
    private void scoreBlocks(int k, int worker) {
        int nvis = visible[2];
        if (nvis <= c.idxTopK()) return;
        mixers[worker].scoreBlocks(rowState[0], nvis * k / headGroups, nvis * (k + 1) / headGroups, 0, iqBuf, iwBuf, order);
    }
}
