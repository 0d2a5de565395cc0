package dgr.engine.deepseek4;

import dgr.engine.Batch;
import dgr.engine.ForwardResult;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * One forward pass over the span (DSV4-SPEC 2.0–2.5). Buffers are row-major, one row per batch row.
 * The batch has been validated by the engine.
 */
final class Dsv4Forward {
    private final Dsv4Config c;
    private final Dsv4Weights w;
    private final Dsv4Kernels k;
    private final Dsv4Rope ropeWindow, ropeCompressed;
    private final int firstLayer, endLayer;
    private final int nEmbd, hcD, hc;
    private final Result result;

    Dsv4Forward(Dsv4Config c, Dsv4Weights w, Dsv4Kernels k, Dsv4Rope ropeWindow, Dsv4Rope ropeCompressed,
                int firstLayer, int endLayer, int maxRows) {
        this.c = c;
        this.w = w;
        this.k = k;
        this.ropeWindow = ropeWindow;
        this.ropeCompressed = ropeCompressed;
        this.firstLayer = firstLayer;
        this.endLayer = endLayer;
        this.nEmbd = c.nEmbd();
        this.hc = c.hc();
        this.hcD = c.residualWidth();
        int width = endLayer == c.nLayer() ? c.vocab() : hcD;
        this.result = new Result(new float[Math.multiplyExact(maxRows, width)], new int[maxRows], width);
    }

    /** Output of one pass; rows that asked for none have offset -1. */
    private record Result(float[] outputArray, int[] offsets, int outputWidth) implements ForwardResult {
        @Override
        public int outputOffset(int row) {
            int o = offsets[row];
            if (o < 0) throw new IllegalArgumentException("row " + row + " did not ask for output");
            return o;
        }
    }

    /** Consecutive rows of one session: [start, end). */
    private record Run(Dsv4State state, int start, int end) {}

    ForwardResult run(Batch b) {
        int n = b.size();
        List<Run> runs = new ArrayList<>();
        for (int r = 0; r < n; ) {
            int e = r + 1;
            while (e < n && b.slot(e) == b.slot(r)) e++;
            runs.add(new Run((Dsv4State) b.slot(r), r, e));
            r = e;
        }
        float[] x = new float[n * hcD];
        if (firstLayer == 0) {
            Mat emb = w.tokenEmbd;
            for (int r = 0; r < n; r++) {
                int src = emb.off() + b.token(r) * nEmbd;
                for (int s = 0; s < hc; s++) System.arraycopy(emb.w(), src, x, r * hcD + s * nEmbd, nEmbd);
            }
        } else {
            System.arraycopy(b.boundary(), 0, x, 0, n * hcD);
        }
        for (int li = 0; li < w.layers.length; li++) layer(b, n, runs, x, w.layers[li], li);
        for (Run run : runs) run.state.advance(b.position(run.end - 1) + 1);

        Arrays.fill(result.offsets, 0, n, -1);
        if (endLayer == c.nLayer()) {
            head(b, n, x);
        } else {
            System.arraycopy(x, 0, result.outputArray, 0, n * hcD);
            for (int r = 0; r < n; r++) result.offsets[r] = r * hcD;
        }
        return result;
    }

    // ---------------------------------------------------------------- layer

    private void layer(Batch b, int n, List<Run> runs, float[] x, Dsv4Weights.Layer L, int li) {
        float[] y = new float[n * nEmbd], post = new float[n * hc], comb = new float[n * hc * hc];
        hcPre(L.hcAttn(), x, n, y, post, comb);
        for (int r = 0; r < n; r++) Dsv4Kernels.rmsNorm(y, r * nEmbd, y, r * nEmbd, nEmbd, L.attnNorm(), c.eps());
        float[] a = attention(b, n, runs, y, L, li);
        hcPost(a, x, n, post, comb);

        hcPre(L.hcFfn(), x, n, y, post, comb);
        for (int r = 0; r < n; r++) Dsv4Kernels.rmsNorm(y, r * nEmbd, y, r * nEmbd, nEmbd, L.ffnNorm(), c.eps());
        float[] f = ffn(b, n, y, L);
        hcPost(f, x, n, post, comb);
    }

    // ---------------------------------------------------------------- hyper-connections (2.1)

    private void hcPre(Dsv4Weights.Hc h, float[] x, int n, float[] y, float[] post, float[] comb) {
        int m = c.hcMix();
        float[] z = new float[n * hcD];
        for (int r = 0; r < n; r++) Dsv4Kernels.rmsNorm(x, r * hcD, z, r * hcD, hcD, null, c.eps());
        float[] mix = new float[n * m];
        k.matmul(h.fn(), z, 0, hcD, mix, 0, m, n);
        float[] base = h.base(), scale = h.scale();
        float[] pre = new float[hc];
        for (int r = 0; r < n; r++) {
            int o = r * m;
            for (int s = 0; s < hc; s++) pre[s] = Dsv4Kernels.sigmoid(mix[o + s] * scale[0] + base[s]) + c.hcEps();
            for (int s = 0; s < hc; s++) post[r * hc + s] = 2f * Dsv4Kernels.sigmoid(mix[o + hc + s] * scale[1] + base[hc + s]);
            int co = r * hc * hc;
            for (int i = 0; i < hc * hc; i++) comb[co + i] = mix[o + 2 * hc + i] * scale[2] + base[2 * hc + i];
            sinkhorn(comb, co);
            int yo = r * nEmbd, xo = r * hcD;
            for (int i = 0; i < nEmbd; i++) {
                float v = 0f;
                for (int s = 0; s < hc; s++) v += pre[s] * x[xo + s * nEmbd + i];
                y[yo + i] = v;
            }
        }
    }

    /** C[src][dst] at off + src·hc + dst: row softmax + eps, then alternate column/row normalisation. */
    private void sinkhorn(float[] cm, int off) {
        float eps = c.hcEps();
        for (int s = 0; s < hc; s++) {
            int ro = off + s * hc;
            float mx = Float.NEGATIVE_INFINITY;
            for (int d = 0; d < hc; d++) mx = Math.max(mx, cm[ro + d]);
            float sum = 0f;
            for (int d = 0; d < hc; d++) { cm[ro + d] = (float) Math.exp(cm[ro + d] - mx); sum += cm[ro + d]; }
            for (int d = 0; d < hc; d++) cm[ro + d] = cm[ro + d] / sum + eps;
        }
        normaliseColumns(cm, off, eps);
        for (int it = 1; it < c.sinkhornIters(); it++) {
            for (int s = 0; s < hc; s++) {
                int ro = off + s * hc;
                float sum = 0f;
                for (int d = 0; d < hc; d++) sum += cm[ro + d];
                for (int d = 0; d < hc; d++) cm[ro + d] /= sum + eps;
            }
            normaliseColumns(cm, off, eps);
        }
    }

    private void normaliseColumns(float[] cm, int off, float eps) {
        for (int d = 0; d < hc; d++) {
            float sum = 0f;
            for (int s = 0; s < hc; s++) sum += cm[off + s * hc + d];
            for (int s = 0; s < hc; s++) cm[off + s * hc + d] /= sum + eps;
        }
    }

    /** X'[dst] = post_dst·f + Σ_src C[src][dst]·X[src]. */
    private void hcPost(float[] f, float[] x, int n, float[] post, float[] comb) {
        float[] t = new float[hcD];
        for (int r = 0; r < n; r++) {
            int xo = r * hcD, fo = r * nEmbd, co = r * hc * hc;
            for (int d = 0; d < hc; d++) {
                float p = post[r * hc + d];
                for (int i = 0; i < nEmbd; i++) {
                    float v = 0f;
                    for (int s = 0; s < hc; s++) v += comb[co + s * hc + d] * x[xo + s * nEmbd + i];
                    t[d * nEmbd + i] = p * f[fo + i] + v;
                }
            }
            System.arraycopy(t, 0, x, xo, hcD);
        }
    }

    // ---------------------------------------------------------------- attention (2.2, 2.3)

    private float[] attention(Batch b, int n, List<Run> runs, float[] x, Dsv4Weights.Layer L, int li) {
        int d = c.headDim(), nh = c.nHead(), hd = nh * d, rq = c.qLoraRank();
        Dsv4Rope rope = L.ratio() == 0 ? ropeWindow : ropeCompressed;
        float[] qa = new float[n * rq];
        k.matmul(L.qa(), x, 0, nEmbd, qa, 0, rq, n);
        for (int r = 0; r < n; r++) Dsv4Kernels.rmsNorm(qa, r * rq, qa, r * rq, rq, L.qaNorm(), c.eps());
        float[] q = new float[n * hd];
        k.matmul(L.qb(), qa, 0, rq, q, 0, hd, n);
        float[] kv = new float[n * d];
        k.matmul(L.kv(), x, 0, nEmbd, kv, 0, d, n);
        for (int r = 0; r < n; r++) {
            int p = b.position(r);
            for (int h = 0; h < nh; h++) {
                int o = r * hd + h * d;
                Dsv4Kernels.rmsNorm(q, o, q, o, d, null, c.eps());
                rope.apply(q, o, d, p, false);
            }
            Dsv4Kernels.rmsNorm(kv, r * d, kv, r * d, d, L.kvNorm(), c.eps());
            rope.apply(kv, r * d, d, p, false);
        }
        Proj comp = L.compressor() == null ? null : compressorInputs(b, n, x, L.compressor());
        Proj idxKeys = null;
        float[] iq = null, iw = null;
        Dsv4Weights.Indexer ix = L.indexer();
        if (ix != null) {
            idxKeys = compressorInputs(b, n, x, ix.keys());
            int hi = c.idxHeads(), di = c.idxDim();
            iq = new float[n * hi * di];
            k.matmul(ix.qb(), qa, 0, rq, iq, 0, hi * di, n);
            iw = new float[n * hi];
            k.matmul(ix.proj(), x, 0, nEmbd, iw, 0, hi, n);
            float inv = (float) (1.0 / Math.sqrt((double) di * hi));
            for (int r = 0; r < n; r++) {
                for (int h = 0; h < hi; h++) {
                    ropeCompressed.apply(iq, (r * hi + h) * di, di, b.position(r), false);
                    iw[r * hi + h] *= inv;
                }
            }
        }
        float[] att = new float[n * hd];
        Proj fc = comp, fi = idxKeys;
        float[] fiq = iq, fiw = iw;
        k.forEach(runs.size(), ri -> {
            Run run = runs.get(ri);
            Dsv4State.LayerState ls = run.state.layers[li];
            for (int r = run.start; r < run.end; r++) {
                int p = b.position(r);
                store(ls, L, r, p, kv, fc, fi);
                attendRow(ls, L, r, p, q, fiq, fiw, att);
            }
        });
        int g = c.oGroups(), ro = c.oLoraRank(), gd = hd / g;
        float[] u = new float[n * g * ro];
        for (int gi = 0; gi < g; gi++) k.matmul(L.outA().slice(gi * ro, ro), att, gi * gd, hd, u, gi * ro, g * ro, n);
        float[] out = new float[n * nEmbd];
        k.matmul(L.outB(), u, 0, g * ro, out, 0, nEmbd, n);
        return out;
    }

    /** A compressor's per-token values v and scores s (score includes ape[p mod ratio]). */
    private record Proj(float[] v, float[] s, int width) {}

    private Proj compressorInputs(Batch b, int n, float[] x, Dsv4Weights.Compressor cp) {
        int cw = cp.kv().rows();
        float[] v = new float[n * cw], s = new float[n * cw];
        k.matmul(cp.kv(), x, 0, nEmbd, v, 0, cw, n);
        k.matmul(cp.gate(), x, 0, nEmbd, s, 0, cw, n);
        for (int r = 0; r < n; r++) {
            int ao = cp.ape().off() + (b.position(r) % cp.ratio()) * cw;
            for (int i = 0; i < cw; i++) s[r * cw + i] += cp.ape().w()[ao + i];
        }
        return new Proj(v, s, cw);
    }

    /** Writes the token's window row and compressor rows; emits entries of blocks it completes. */
    private void store(Dsv4State.LayerState ls, Dsv4Weights.Layer L, int r, int p, float[] kv, Proj comp, Proj idx) {
        int d = c.headDim();
        int wi = p % c.nSwa();
        if (ls.window[wi] == null) ls.window[wi] = new float[d];
        System.arraycopy(kv, r * d, ls.window[wi], 0, d);
        int ratio = L.ratio();
        if (ratio == 0) return;
        int ri = p % ls.ringV.length;
        System.arraycopy(comp.v, r * comp.width, ls.ringV[ri], 0, comp.width);
        System.arraycopy(comp.s, r * comp.width, ls.ringS[ri], 0, comp.width);
        if (idx != null) {
            System.arraycopy(idx.v, r * idx.width, ls.idxRingV[ri], 0, idx.width);
            System.arraycopy(idx.s, r * idx.width, ls.idxRingS[ri], 0, idx.width);
        }
        if ((p + 1) % ratio != 0) return;
        int blk = p / ratio;
        ls.entries.add(compress(ls.ringV, ls.ringS, blk, ratio, d, L.compressor().norm()));
        if (idx != null) ls.idxKeys.add(compress(ls.idxRingV, ls.idxRingS, blk, ratio, c.idxDim(), L.indexer().keys().norm()));
    }

    /**
     * Entry of block {@code blk} (2.3.1): a per-channel softmax over the block's token rows. With
     * overlap (ratio 4) rows are the previous block's first halves (none for block 0) and the
     * current block's second halves. Then RMSNorm and the compressed rope at the block start.
     */
    private float[] compress(float[][] ringV, float[][] ringS, int blk, int ratio, int width, float[] norm) {
        float[] out = new float[width];
        int ring = ringV.length;
        boolean overlap = ratio == 4;
        int prevRows = overlap && blk > 0 ? ratio : 0;
        for (int e = 0; e < width; e++) {
            float mx = Float.NEGATIVE_INFINITY;
            for (int j = 0; j < prevRows; j++) mx = Math.max(mx, ringS[((blk - 1) * ratio + j) % ring][e]);
            int co = overlap ? width : 0;
            for (int j = 0; j < ratio; j++) mx = Math.max(mx, ringS[(blk * ratio + j) % ring][co + e]);
            double den = 0, num = 0;
            for (int j = 0; j < prevRows; j++) {
                int row = ((blk - 1) * ratio + j) % ring;
                double ex = Math.exp(ringS[row][e] - mx);
                den += ex;
                num += ex * ringV[row][e];
            }
            for (int j = 0; j < ratio; j++) {
                int row = (blk * ratio + j) % ring;
                double ex = Math.exp(ringS[row][co + e] - mx);
                den += ex;
                num += ex * ringV[row][co + e];
            }
            out[e] = (float) (num / den);
        }
        Dsv4Kernels.rmsNorm(out, 0, out, 0, width, norm, c.eps());
        ropeCompressed.apply(out, 0, width, blk * ratio, false);
        return out;
    }

    private void attendRow(Dsv4State.LayerState ls, Dsv4Weights.Layer L, int r, int p, float[] q,
                           float[] iq, float[] iw, float[] att) {
        int d = c.headDim(), nh = c.nHead(), hd = nh * d;
        int w0 = Math.max(0, p - c.nSwa() + 1);
        List<float[]> keys = new ArrayList<>(p - w0 + 1 + ls.entries.size());
        for (int s = w0; s <= p; s++) keys.add(ls.window[s % c.nSwa()]);
        if (L.ratio() == 4) {
            for (int blk : selectBlocks(ls, r, iq, iw)) keys.add(ls.entries.get(blk));
        } else if (L.ratio() == 128) {
            keys.addAll(ls.entries);
        }
        int nk = keys.size();
        float[] logit = new float[nk];
        float scale = (float) (1.0 / Math.sqrt(d));
        float[] sinks = L.sinks();
        Dsv4Rope rope = L.ratio() == 0 ? ropeWindow : ropeCompressed;
        for (int h = 0; h < nh; h++) {
            int qo = r * hd + h * d;
            float mx = sinks[h];
            for (int j = 0; j < nk; j++) {
                logit[j] = k.dot(q, qo, keys.get(j), 0, d) * scale;
                mx = Math.max(mx, logit[j]);
            }
            double den = Math.exp(sinks[h] - mx);
            for (int j = 0; j < nk; j++) {
                logit[j] = (float) Math.exp(logit[j] - mx);
                den += logit[j];
            }
            int ao = r * hd + h * d;
            for (int j = 0; j < nk; j++) {
                float pj = logit[j];
                // A subnormal weight (score ~87 under the maximum) contributes below 2^-126 of the
                // largest and costs a microcode assist per multiply on Intel: skipped (as in LlamaEngine).
                if (pj < Float.MIN_NORMAL) continue;
                float[] kj = keys.get(j);
                for (int i = 0; i < d; i++) att[ao + i] += pj * kj[i];
            }
            float inv = (float) (1.0 / den);
            for (int i = 0; i < d; i++) att[ao + i] *= inv;
            rope.apply(att, ao, d, p, true);
        }
    }

    /** Lightning indexer (2.3.3): top-k visible blocks by Σ_h iw_h·ReLU(iq_h·ik_b), ties to the lower block. */
    private int[] selectBlocks(Dsv4State.LayerState ls, int r, float[] iq, float[] iw) {
        int nvis = ls.idxKeys.size();
        int topk = c.idxTopK();
        if (nvis <= topk) {
            int[] all = new int[nvis];
            for (int i = 0; i < nvis; i++) all[i] = i;
            return all;
        }
        int hi = c.idxHeads(), di = c.idxDim();
        float[] score = new float[nvis];
        for (int blk = 0; blk < nvis; blk++) {
            float[] key = ls.idxKeys.get(blk);
            float s = 0f;
            for (int h = 0; h < hi; h++) {
                float dp = k.dot(iq, (r * hi + h) * di, key, 0, di);
                if (dp > 0f) s += iw[r * hi + h] * dp;
            }
            score[blk] = s;
        }
        Integer[] order = new Integer[nvis];
        for (int i = 0; i < nvis; i++) order[i] = i;
        Arrays.sort(order, (a, bb) -> {
            int cmp = Float.compare(score[bb], score[a]);
            return cmp != 0 ? cmp : Integer.compare(a, bb);
        });
        int[] sel = new int[topk];
        for (int i = 0; i < topk; i++) sel[i] = order[i];
        Arrays.sort(sel);
        return sel;
    }

    // ---------------------------------------------------------------- MoE (2.5)

    private float[] ffn(Batch b, int n, float[] x, Dsv4Weights.Layer L) {
        int ne = c.nExpert(), ke = c.nExpertUsed(), ff = c.ffExp();
        float[] logits = new float[n * ne];
        k.matmul(L.router(), x, 0, nEmbd, logits, 0, ne, n);
        int[] sel = new int[n * ke];
        float[] wt = new float[n * ke];
        float[] prob = new float[ne];
        Integer[] order = new Integer[ne];
        for (int r = 0; r < n; r++) {
            for (int e = 0; e < ne; e++) {
                float z = logits[r * ne + e];
                prob[e] = (float) Math.sqrt(z > 20f ? z : Math.log1p(Math.exp(z)));
            }
            if (L.hashRouted()) {
                System.arraycopy(L.tid2eid(), b.token(r) * ke, sel, r * ke, ke);
            } else {
                float[] bias = L.probBias();
                float[] biased = new float[ne];
                for (int e = 0; e < ne; e++) { biased[e] = prob[e] + bias[e]; order[e] = e; }
                Arrays.sort(order, (a, bb) -> {
                    int cmp = Float.compare(biased[bb], biased[a]);
                    return cmp != 0 ? cmp : Integer.compare(a, bb);
                });
                for (int j = 0; j < ke; j++) sel[r * ke + j] = order[j];
            }
            float sum = 0f;
            for (int j = 0; j < ke; j++) { wt[r * ke + j] = prob[sel[r * ke + j]]; sum += wt[r * ke + j]; }
            if (c.expertWeightsNorm()) {
                float den = Math.max(sum, 6.103515625e-5f);
                for (int j = 0; j < ke; j++) wt[r * ke + j] /= den;
            }
            float sc = c.expertWeightsScale();
            if (sc != 0f && sc != 1f) for (int j = 0; j < ke; j++) wt[r * ke + j] *= sc;
        }
        // Group rows per expert: each expert's matrices are read once for all the rows that chose it.
        float[] eo = new float[n * ke * nEmbd];
        int[] pick = new int[n * ke];
        float clamp = c.clampExp()[L.index()];
        for (int e = 0; e < ne; e++) {
            int m = 0;
            for (int i = 0; i < n * ke; i++) if (sel[i] == e) pick[m++] = i;
            if (m == 0) continue;
            float[] xg = new float[m * nEmbd];
            for (int i = 0; i < m; i++) System.arraycopy(x, (pick[i] / ke) * nEmbd, xg, i * nEmbd, nEmbd);
            float[] h = swiglu(L.gateExp()[e], L.upExp()[e], xg, m, ff, clamp);
            float[] yd = new float[m * nEmbd];
            k.matmul(L.downExp()[e], h, 0, ff, yd, 0, nEmbd, m);
            for (int i = 0; i < m; i++) System.arraycopy(yd, i * nEmbd, eo, pick[i] * nEmbd, nEmbd);
        }
        float[] out = new float[n * nEmbd];
        for (int r = 0; r < n; r++) {
            for (int j = 0; j < ke; j++) {
                float wj = wt[r * ke + j];
                int so = (r * ke + j) * nEmbd;
                for (int i = 0; i < nEmbd; i++) out[r * nEmbd + i] += wj * eo[so + i];
            }
        }
        if (L.gateSh() != null) {
            int fsh = L.gateSh().rows();
            float[] h = swiglu(L.gateSh(), L.upSh(), x, n, fsh, c.clampShexp()[L.index()]);
            float[] ys = new float[n * nEmbd];
            k.matmul(L.downSh(), h, 0, fsh, ys, 0, nEmbd, n);
            for (int i = 0; i < n * nEmbd; i++) out[i] += ys[i];
        }
        return out;
    }

    /** silu(min(g, L))·clamp(u, −L, L) when L > 1e-6, else silu(g)·u. */
    private float[] swiglu(Mat gate, Mat up, float[] x, int m, int ff, float limit) {
        float[] g = new float[m * ff], u = new float[m * ff];
        k.matmul(gate, x, 0, nEmbd, g, 0, ff, m);
        k.matmul(up, x, 0, nEmbd, u, 0, ff, m);
        boolean clamp = limit > 1e-6f;
        for (int i = 0; i < m * ff; i++) {
            float a = g[i], v = u[i];
            if (clamp) {
                a = Math.min(a, limit);
                v = Math.max(-limit, Math.min(limit, v));
            }
            g[i] = Dsv4Kernels.silu(a) * v;
        }
        return g;
    }

    // ---------------------------------------------------------------- head

    private void head(Batch b, int n, float[] x) {
        int m = 0;
        int[] rows = new int[n];
        for (int r = 0; r < n; r++) if (b.wantsOutput(r)) rows[m++] = r;
        if (m == 0) return;
        float[] y = new float[m * nEmbd];
        float[] z = new float[hcD];
        Dsv4Weights.Hc h = w.hcHead;
        for (int i = 0; i < m; i++) {
            int xo = rows[i] * hcD;
            Dsv4Kernels.rmsNorm(x, xo, z, 0, hcD, null, c.eps());
            for (int s = 0; s < hc; s++) {
                float mix = k.dot(h.fn().w(), h.fn().off() + s * hcD, z, 0, hcD);
                float ws = Dsv4Kernels.sigmoid(mix * h.scale()[0] + h.base()[s]) + c.hcEps();
                for (int e = 0; e < nEmbd; e++) y[i * nEmbd + e] += ws * x[xo + s * nEmbd + e];
            }
            Dsv4Kernels.rmsNorm(y, i * nEmbd, y, i * nEmbd, nEmbd, w.outputNorm, c.eps());
        }
        int v = c.vocab();
        k.matmul(w.output, y, 0, nEmbd, result.outputArray, 0, v, m);
        for (int i = 0; i < m; i++) result.offsets[rows[i]] = i * v;
    }
}
