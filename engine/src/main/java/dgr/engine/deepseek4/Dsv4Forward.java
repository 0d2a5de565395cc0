package dgr.engine.deepseek4;

import dgr.engine.Batch;
import dgr.engine.ForwardResult;
import dgr.engine.kernel.RowDecoder;
import dgr.engine.llama.Matmuls;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * One forward pass over the span (DSV4-SPEC 2.0–2.5). Buffers are row-major, one row per batch row.
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
        float[] x = new float[n * hcD];
        if (firstLayer == 0) {
            for (int r = 0; r < n; r++) {
                RowDecoder.decodeRow(w.tokenEmbd, b.token(r), x, r * hcD);
                for (int s = 1; s < hc; s++) System.arraycopy(x, r * hcD, x, r * hcD + s * nEmbd, nEmbd);
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

    /**
     * One dispatch from the attention's input mix (2.1) to the router, then the experts': the mix's
     * product, behind a gate its Sinkhorn mix and norm, the attention sub-layer ({@link Dsv4Attention#add}),
     * behind a gate its output added into the streams and the FFN's mix norm, the FFN's mix, behind
     * a gate its Sinkhorn mix and norm, then the router ({@link Dsv4Experts#run} adds it and runs the
     * dispatch before its own).
     */
    private void layer(Batch b, int n, List<Run> runs, float[] x, Dsv4Weights.Layer L, int li) {
        float[] y = new float[n * nEmbd], post = new float[n * hc], comb = new float[n * hc * hc];
        Dsv4Products p = products.begin(n);
        hcPre(L.hcAttn(), x, n, y, post, comb, L.attnNorm(), p);
        float[] a = attention.add(b, n, runs, y, L, li, p);
        p.rows(n, (r0, r1) -> hcPost(a, x, r0, r1, post, comb));
        hcPre(L.hcFfn(), x, n, y, post, comb, L.ffnNorm(), p);

        float[] f = new float[n * nEmbd];
        experts.run(b, n, y, L, f, p);
        hcPost(f, x, 0, n, post, comb);
    }

    // ---------------------------------------------------------------- hyper-connections (2.1)

    /**
     * Adds to {@code p}: behind a gate the streams normed, the mix's product, and behind a gate each
     * row's pre weights, post weights and Sinkhorn-normalised comb, its streams mixed into {@code y}
     * and {@code y} normed by {@code norm}.
     */
    private void hcPre(Dsv4Weights.Hc h, float[] x, int n, float[] y, float[] post, float[] comb, float[] norm, Dsv4Products p) {
        float[] z = new float[n * hcD];
        float[] mix = new float[n * c.hcMix()];
        p.rows(n, (r0, r1) -> {
            for (int r = r0; r < r1; r++) Dsv4Kernels.rmsNorm(x, r * hcD, z, r * hcD, hcD, null, c.eps());
        });
        p.add(h.fn(), z, mix).rows(n, (r0, r1) -> hcMix(h, x, r0, r1, mix, y, post, comb, norm));
    }

    private void hcMix(Dsv4Weights.Hc h, float[] x, int r0, int r1, float[] mix, float[] y, float[] post, float[] comb, float[] norm) {
        int m = c.hcMix();
        float[] base = h.base(), scale = h.scale();
        float[] pre = new float[hc];
        for (int r = r0; r < r1; r++) {
            int o = r * m;
            for (int s = 0; s < hc; s++) pre[s] = Dsv4Kernels.sigmoid(mix[o + s] * scale[0] + base[s]) + c.hcEps();
            for (int s = 0; s < hc; s++) post[r * hc + s] = 2f * Dsv4Kernels.sigmoid(mix[o + hc + s] * scale[1] + base[hc + s]);
            int co = r * hc * hc;
            for (int i = 0; i < hc * hc; i++) comb[co + i] = mix[o + 2 * hc + i] * scale[2] + base[2 * hc + i];
            sinkhorn(comb, co);
            Dsv4Kernels.mixStreams(x, r * hcD, nEmbd, hc, pre, 0, 1, y, r * nEmbd);
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
    private void hcPost(float[] f, float[] x, int r0, int r1, float[] post, float[] comb) {
        float[] t = new float[hcD];
        for (int r = r0; r < r1; r++) {
            int xo = r * hcD, fo = r * nEmbd, co = r * hc * hc;
            for (int d = 0; d < hc; d++) {
                Dsv4Kernels.mixStreams(x, xo, nEmbd, hc, comb, co + d, hc, t, d * nEmbd);
                Dsv4Kernels.addScaled(f, fo, post[r * hc + d], t, d * nEmbd, nEmbd);
            }
            System.arraycopy(t, 0, x, xo, hcD);
        }
    }

    // ---------------------------------------------------------------- head

    private void head(Batch b, int n, float[] x) {
        int m = 0;
        int[] rows = new int[n];
        for (int r = 0; r < n; r++) if (b.wantsOutput(r)) rows[m++] = r;
        if (m == 0) return;
        float[] y = new float[m * nEmbd];
        float[] z = new float[m * hcD];
        float[] mix = new float[m * hc];
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
