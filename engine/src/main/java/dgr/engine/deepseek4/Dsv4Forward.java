package dgr.engine.deepseek4;

import dgr.engine.Batch;
import dgr.engine.ForwardResult;
import dgr.engine.kernel.RowDecoder;
import dgr.engine.llama.Matmuls;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * One forward pass over the span (DSV4-SPEC 2.0–2.5). Buffers are row-major, one row per batch row,
 * sized for the engine's most rows once and reused by every layer and pass (counted by {@link #bytes}).
 * The batch has been validated by the engine. Matrix products go through {@link Matmuls} (the
 * engine's kernels on its worker pool); attention is {@link Dsv4Attention}, the FFN {@link Dsv4Experts}.
 */
final class Dsv4Forward {
    private final Dsv4Config c;
    private final Dsv4Weights w;
    private final Dsv4Products products;
    private final Dsv4Attention attention;
    private final Dsv4Experts experts;
    private final int firstLayer, endLayer;
    private final int nEmbd, hcD, hc;
    private final Result result;
    /**
     * The residual streams (x), the streams mixed before their copy back (xt), a branch's input (y) and
     * output (f), the normed streams (z), the mix's product (mix) and each row's pre, post and comb weights.
     */
    private final float[] x, xt, y, f, z, mix, pre, post, comb;
    private final int[] outRows;

    Dsv4Forward(Dsv4Config c, Dsv4Weights w, Matmuls mats, Dsv4Attention attention, int firstLayer, int endLayer, int maxRows) {
        this.c = c;
        this.w = w;
        this.products = new Dsv4Products(mats);
        this.attention = attention;
        this.experts = new Dsv4Experts(c, maxRows, mats);
        this.firstLayer = firstLayer;
        this.endLayer = endLayer;
        this.nEmbd = c.nEmbd();
        this.hc = c.hc();
        this.hcD = c.residualWidth();
        int width = endLayer == c.nLayer() ? c.vocab() : hcD;
        this.result = new Result(new float[Math.multiplyExact(maxRows, width)], new int[maxRows], width);
        this.x = new float[Math.multiplyExact(maxRows, hcD)];
        this.xt = new float[x.length];
        this.z = new float[x.length];
        this.y = new float[Math.multiplyExact(maxRows, nEmbd)];
        this.f = new float[y.length];
        this.mix = new float[Math.multiplyExact(maxRows, c.hcMix())];
        this.pre = new float[maxRows * hc];
        this.post = new float[maxRows * hc];
        this.comb = new float[maxRows * hc * hc];
        this.outRows = new int[maxRows];
    }

    /** Bytes of the working buffers: this pass's, the attention's and the experts' (which grow with the batches run). */
    long bytes() {
        long floats = (long) result.outputArray.length + x.length + xt.length + z.length + y.length + f.length + mix.length
                + pre.length + post.length + comb.length;
        return 4 * floats + 4L * (result.offsets.length + outRows.length) + attention.bytes() + experts.bytes();
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
    record Run(Dsv4State state, int start, int end) {}

    ForwardResult run(Batch b) {
        int n = b.size();
        List<Run> runs = new ArrayList<>();
        for (int r = 0; r < n; ) {
            int e = r + 1;
            while (e < n && b.slot(e) == b.slot(r)) e++;
            runs.add(new Run((Dsv4State) b.slot(r), r, e));
            r = e;
        }
        if (firstLayer == 0) {
            for (int r = 0; r < n; r++) {
                RowDecoder.decodeRow(w.tokenEmbd, b.token(r), x, r * hcD);
                for (int s = 1; s < hc; s++) System.arraycopy(x, r * hcD, x, r * hcD + s * nEmbd, nEmbd);
            }
        } else {
            System.arraycopy(b.boundary(), 0, x, 0, n * hcD);
        }
        for (int li = 0; li < w.layers.length; li++) layer(b, n, runs, w.layers[li], li);
        for (Run run : runs) run.state.advance(b.position(run.end - 1) + 1);

        Arrays.fill(result.offsets, 0, n, -1);
        if (endLayer == c.nLayer()) {
            head(b, n);
        } else {
            System.arraycopy(x, 0, result.outputArray, 0, n * hcD);
            for (int r = 0; r < n; r++) result.offsets[r] = r * hcD;
        }
        return result;
    }

    // ---------------------------------------------------------------- layer

    /**
     * One dispatch from the attention's input mix (2.1) to the router, then the experts': the mix's
     * product, behind a gate its Sinkhorn mix and norm, the attention sub-layer ({@link Dsv4Attention#add}),
     * behind a gate its output added into the streams and the FFN's mix norm, the FFN's mix, behind
     * a gate its Sinkhorn mix and norm, then the router ({@link Dsv4Experts#run} adds it and runs the
     * dispatch before its own).
     */
    private void layer(Batch b, int n, List<Run> runs, Dsv4Weights.Layer L, int li) {
        Dsv4Products p = products.begin(n);
        hcPre(L.hcAttn(), n, L.attnNorm(), p);
        float[] a = attention.add(b, n, runs, y, L, li, p);
        p.rows(n, (r0, r1) -> hcPost(a, r0, r1));
        hcPre(L.hcFfn(), n, L.ffnNorm(), p);
        experts.run(b, n, y, L, f, p);
        hcPost(f, 0, n);
    }

    // ---------------------------------------------------------------- hyper-connections (2.1)

    /**
     * Adds to {@code p}: behind a gate the streams normed, the mix's product, and behind a gate each
     * row's pre weights, post weights and Sinkhorn-normalised comb, its streams mixed into {@code y}
     * and {@code y} normed by {@code norm}.
     */
    private void hcPre(Dsv4Weights.Hc h, int n, float[] norm, Dsv4Products p) {
        p.rows(n, (r0, r1) -> {
            for (int r = r0; r < r1; r++) Dsv4Kernels.rmsNorm(x, r * hcD, z, r * hcD, hcD, null, c.eps());
        });
        p.add(h.fn(), z, mix).rows(n, (r0, r1) -> hcMix(h, r0, r1, norm));
    }

    private void hcMix(Dsv4Weights.Hc h, int r0, int r1, float[] norm) {
        int m = c.hcMix();
        float[] base = h.base(), scale = h.scale();
        for (int r = r0; r < r1; r++) {
            int o = r * m, po = r * hc;
            for (int s = 0; s < hc; s++) pre[po + s] = Dsv4Kernels.sigmoid(mix[o + s] * scale[0] + base[s]) + c.hcEps();
            for (int s = 0; s < hc; s++) post[r * hc + s] = 2f * Dsv4Kernels.sigmoid(mix[o + hc + s] * scale[1] + base[hc + s]);
            int co = r * hc * hc;
            for (int i = 0; i < hc * hc; i++) comb[co + i] = mix[o + 2 * hc + i] * scale[2] + base[2 * hc + i];
            sinkhorn(comb, co);
            Dsv4Kernels.mixStreams(x, r * hcD, nEmbd, hc, pre, po, 1, y, r * nEmbd);
            Dsv4Kernels.rmsNorm(y, r * nEmbd, y, r * nEmbd, nEmbd, norm, c.eps());
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

    /** X'[dst] = post_dst·f + Σ_src C[src][dst]·X[src] (the mix first, then the branch added in one FMA). */
    private void hcPost(float[] f, int r0, int r1) {
        for (int r = r0; r < r1; r++) {
            int xo = r * hcD, fo = r * nEmbd, co = r * hc * hc;
            for (int d = 0; d < hc; d++) {
                Dsv4Kernels.mixStreams(x, xo, nEmbd, hc, comb, co + d, hc, xt, xo + d * nEmbd);
                Dsv4Kernels.addScaled(f, fo, post[r * hc + d], xt, xo + d * nEmbd, nEmbd);
            }
            System.arraycopy(xt, xo, x, xo, hcD);
        }
    }

    // ---------------------------------------------------------------- head

    private void head(Batch b, int n) {
        int m = 0;
        int[] rows = outRows;
        for (int r = 0; r < n; r++) if (b.wantsOutput(r)) rows[m++] = r;
        if (m == 0) return;
        // y sums the streams below from zero; z and mix are written whole (the mix's product: m rows of hc)
        Arrays.fill(y, 0, m * nEmbd, 0f);
        Dsv4Weights.Hc h = w.hcHead;
        for (int i = 0; i < m; i++) Dsv4Kernels.rmsNorm(x, rows[i] * hcD, z, i * hcD, hcD, null, c.eps());
        products.begin(m).add(h.fn(), z, mix).run();
        for (int i = 0; i < m; i++) {
            int xo = rows[i] * hcD;
            for (int s = 0; s < hc; s++) {
                float ws = Dsv4Kernels.sigmoid(mix[i * hc + s] * h.scale()[0] + h.base()[s]) + c.hcEps();
                for (int e = 0; e < nEmbd; e++) y[i * nEmbd + e] += ws * x[xo + s * nEmbd + e];
            }
            Dsv4Kernels.rmsNorm(y, i * nEmbd, y, i * nEmbd, nEmbd, w.outputNorm, c.eps());
        }
        int v = c.vocab();
        products.begin(m).add(w.output, y, result.outputArray).run();
        for (int i = 0; i < m; i++) result.offsets[rows[i]] = i * v;
    }
}
