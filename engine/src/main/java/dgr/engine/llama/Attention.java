package dgr.engine.llama;

import dgr.engine.kernel.Kernels;
import dgr.engine.kernel.Scratch;
import dgr.engine.kernel.WorkerPool;

/**
 * Causal attention over the rows' own slots, all query heads that share a K/V head together
 * (grouped-query attention reads each K and V vector once for them); with a {@code window}
 * (sliding-window layers) over the last {@code window} positions only, the row's own included;
 * scores soft-capped where the model caps them (Gemma 2). K/V heads with values of their own run
 * {@link TiledAttention} (an online softmax over 64-position tiles, items of a K/V head and a run of
 * a slot's rows); latent attention ({@code deepseek2}) scores all positions 8 at a time
 * ({@link Kernels#scores8}), then sums its values from the K pages ({@link Kernels#weightedK}),
 * one item per (row, K/V head). Each score and each output element is one fixed sequence over
 * its own inputs, whatever the batch.
 */
final class Attention implements WorkerPool.Job {
    private final LlamaConfig cfg;
    private final Matmuls mats;
    private final BatchRows rows;
    /** The rows' queries (input) and the heads' outputs, {@code qDim} per row. */
    private final float[] q, att;
    /** Floats between two query heads' scores in {@link Scratch#scores}. */
    private final int scoreStride;
    private int layer;
    /** The layer's window or chunk (sliding-window and chunked layers), or null for all positions. */
    private LlamaConfig.SlidingWindow window;
    /** The layer's sink logits, one per query head (gpt-oss), or null. */
    private float[] layerSinks;
    private final TiledAttention tiled;
    /** The next claim of the current job. */
    private final java.util.concurrent.atomic.AtomicInteger nextClaim = new java.util.concurrent.atomic.AtomicInteger();

    Attention(LlamaConfig cfg, Matmuls mats, BatchRows rows, float[] q, float[] att, int scoreStride, KvCodec kCodec, KvCodec vCodec) {
        this.cfg = cfg;
        this.mats = mats;
        this.rows = rows;
        this.q = q;
        this.att = att;
        this.scoreStride = scoreStride;
        this.tiled = new TiledAttention(cfg, mats.kernels(), mats.pool().size(), rows.slot.length, kCodec, vCodec);
    }

    /** Attention of every row at {@code layer} (an index into the stage's layers) into the output. */
    void attend(int layer, LlamaConfig.SlidingWindow window, float[] sinks) {
        this.layer = layer;
        this.window = window;
        this.layerSinks = sinks;
        if (cfg.mla() == null) tiled.plan(rows.slot, rows.pos, rows.n);
        nextClaim.set(0);
        mats.pool().run(this);
    }

    @Override
    public void run(int worker, int workers) {
        if (cfg.mla() == null) {
            // Claims taken one at a time rather than as fixed shares, so a worker that finishes first, or
            // whose neighbour is descheduled, takes the rest: with fixed shares the caller waited for the
            // other worker through a fifth of the attention of a 4096-token prompt (load 5). Which worker
            // computes a claim never changes its bits.
            for (int c = nextClaim.getAndIncrement(), n = tiled.claims(); c < n; c = nextClaim.getAndIncrement()) {
                tiled.claim(c, worker, layer, window, layerSinks, q, att, rows.slot, rows.pos);
            }
            return;
        }
        int items = rows.n * cfg.nHeadKv();
        Scratch s = mats.scratch(worker);
        for (int it = WorkerPool.from(items, worker, workers), e = WorkerPool.from(items, worker + 1, workers); it < e; it++) {
            group(it / cfg.nHeadKv(), it % cfg.nHeadKv(), s);
        }
    }

    /** Latent attention of row {@code r}: every position scored, normalised, then its values summed from the K pages. */
    private void group(int r, int kh, Scratch s) {
        Kernels kernels = mats.kernels();
        int hd = cfg.headDim(), kvd = cfg.kvDim(), heads = cfg.nHead() / cfg.nHeadKv();
        int qo = r * cfg.qDim() + kh * heads * hd;
        int pos = rows.pos[r];
        KvSlot slot = rows.slot[r];
        float[] sc = s.scores;
        int stride = scoreStride;
        float scale = cfg.multipliers().attentionScale(hd), cap = cfg.softcaps().attention();
        int t0 = window != null ? window.start(pos) : 0;
        for (int tb = t0 - t0 % 8; tb <= pos; tb += 8) {
            kernels.scores8(q, qo, heads, hd, slot.kPageF32(layer, tb), KvSlot.kBlock(tb, kvd) + kh * hd * 8, sc, tb, stride);
        }
        float[] sinks = layerSinks;
        for (int g = 0; g < heads; g++) {
            int so = g * stride;
            float max = Float.NEGATIVE_INFINITY;
            for (int t = t0; t <= pos; t++) {
                float d = LlamaConfig.Softcaps.apply(sc[so + t] * scale, cap);
                sc[so + t] = d;
                if (d > max) max = d;
            }
            // gpt-oss: the head's sink logit joins the softmax (in the maximum and the sum) but weighs no value.
            float sink = sinks == null ? 0f : sinks[kh * heads + g];
            if (sinks != null && sink > max) max = sink;
            float sum = 0f;
            for (int t = t0; t <= pos; t++) {
                float p = (float) Math.exp(sc[so + t] - max);
                sc[so + t] = p;
                sum += p;
            }
            if (sinks != null) sum += (float) Math.exp(sink - max);
            normalize(sc, so + t0, so + pos + 1, sum);
        }
        java.util.Arrays.fill(att, qo, qo + heads * hd, 0f);
        // Latent attention: the values are the latent, the first kvLoraRank of each K page's rows.
        for (int ta = 0; ta <= pos; ta += KvLayout.PAGE_TOKENS) {
            int tEnd = Math.min(pos + 1, ta + KvLayout.PAGE_TOKENS);
            kernels.weightedK(sc, 0, stride, heads, ta, tEnd, slot.kPageF32(layer, ta), KvSlot.kBlock(ta, kvd), kvd,
                    cfg.mla().kvLoraRank(), att, qo, hd, s.lanes);
        }
    }

    /**
     * Divides attention weights {@code sc[from, to)} by {@code sum}; a result below the smallest
     * normal float (a score more than ~87 under the head's maximum) becomes 0: as a subnormal it
     * would reach weightedV's FMAs, and an Intel core takes a microcode assist for each such FMA
     * (a 4096-position head 32× slower on the Sapphire Rapids-class VM of 2026-12-01). Its weight
     * is below 2^-126 of the largest, so no logit moves beyond float rounding.
     */
    static void normalize(float[] sc, int from, int to, float sum) {
        for (int t = from; t < to; t++) {
            float p = sc[t] / sum;
            sc[t] = p < Float.MIN_NORMAL ? 0f : p;
        }
    }
}
