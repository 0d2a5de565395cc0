package dgr.engine.deepseek4;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * One worker's share of V4 attention (DSV4-SPEC 2.3): a token's window row and compressor rows
 * into its session's state, compressed entries of the blocks it completes, the indexer's block
 * choice and the attention itself, for one row at a time in position order. Every sum runs in an
 * order fixed by the row's own position and state, never by the batch or the worker.
 */
final class Dsv4Mixer {
    private final Dsv4Config c;
    private final Dsv4Rope ropeWindow, ropeCompressed;
    /** Vector API dot products ({@code java-simd}, {@code java-q8}), else plain Java ({@code java-scalar}). */
    private final boolean simd;

    Dsv4Mixer(Dsv4Config c, Dsv4Rope ropeWindow, Dsv4Rope ropeCompressed, boolean simd) {
        this.c = c;
        this.simd = simd;
        this.ropeWindow = ropeWindow;
        this.ropeCompressed = ropeCompressed;
    }

    /** Writes the token's window row and compressor rows; emits entries of blocks it completes. */
    void store(Dsv4State.LayerState ls, Dsv4Weights.Layer L, int r, int p, float[] kv, Dsv4Attention.Proj comp,
               Dsv4Attention.Proj idx) {
        int d = c.headDim();
        int wi = p % c.nSwa();
        if (ls.window[wi] == null) ls.window[wi] = new float[d];
        System.arraycopy(kv, r * d, ls.window[wi], 0, d);
        int ratio = L.ratio();
        if (ratio == 0) return;
        int ri = p % ls.ringV.length;
        System.arraycopy(comp.v(), r * comp.width(), ls.ringV[ri], 0, comp.width());
        System.arraycopy(comp.s(), r * comp.width(), ls.ringS[ri], 0, comp.width());
        if (idx != null) {
            System.arraycopy(idx.v(), r * idx.width(), ls.idxRingV[ri], 0, idx.width());
            System.arraycopy(idx.s(), r * idx.width(), ls.idxRingS[ri], 0, idx.width());
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

    void attendRow(Dsv4State.LayerState ls, Dsv4Weights.Layer L, int r, int p, float[] q, float[] iq, float[] iw, float[] att) {
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
                logit[j] = dot(q, qo, keys.get(j), 0, d) * scale;
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
                float dp = dot(iq, (r * hi + h) * di, key, 0, di);
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

    private float dot(float[] a, int ao, float[] b, int bo, int n) {
        return simd ? Dsv4Kernels.dotSimd(a, ao, b, bo, n) : Dsv4Kernels.dotScalar(a, ao, b, bo, n);
    }
}
