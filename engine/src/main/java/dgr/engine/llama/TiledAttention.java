package dgr.engine.llama;

import dgr.engine.kernel.Kernels;
import dgr.engine.kernel.OnlineSoftmax;

/**
 * Causal attention over fixed tiles of key positions (a K/V page each, 64 positions from a
 * multiple of 64) with an online softmax ({@link OnlineSoftmax}). A work item is one K/V head of a
 * run of up to {@link #RUN} rows of one slot at consecutive positions (a prompt chunk): each tile's
 * K and V are read once from memory and then from L1 for every row of the run and every query
 * head sharing the K/V head, where scoring all positions before the softmax read a long context's
 * K and V from memory once per row. Per row and head the sequence is fixed: tiles in position
 * order from the one holding the row's first position ({@code window.start}, else 0), each
 * scored by {@link Kernels#scores8}, weighed, and summed into the output by
 * {@link Kernels#weightedV}; tile boundaries are absolute, so neither the run a row falls in nor
 * the chunking of its prompt changes its bits. Latent attention ({@code deepseek2}) keeps its own path.
 *
 * <p>Float32 pages are read in place. Pages of a compact cache type ({@code f16}, {@code bf16},
 * {@code q8_0}: {@link KvCodec}) are widened, the item's K/V head and the tile's positions only,
 * into per-worker float tiles in the same order (K blocks of 8 positions, V one position after
 * another) and the same kernels read those: the widening is exact, so the arithmetic, and its
 * invariance, is the f32 path's; the memory read per position is a half (f16, bf16) or 17/64
 * ({@code q8_0}) of f32's, and each widened tile serves every row of the run and every query head.
 */
final class TiledAttention {
    static final int TILE = KvLayout.PAGE_TOKENS;
    /** Rows per work item at most: enough to reuse a tile from L1, few enough that both workers get items. */
    static final int RUN = 16;

    private final Kernels kernels;
    private final LlamaConfig cfg;
    /** How K and V pages store their values; null where they are float32 and read in place. */
    private final KvCodec kWide, vWide;
    /** Per worker: one K/V head's K and V of one tile, widened to floats (compact cache types). */
    private final float[][] kTile, vTile;
    private final int hd, kvd, qd, heads, nHeadKv;
    private final float scale, cap;
    /** Per worker: scores of a run's rows and heads for one tile, {@code TILE} per (row, head). */
    private final float[][] tileScores;
    /** Per worker: running maximum and sum per (row, head). */
    private final float[][] state;
    /** Row where run {@code i} starts ({@code runStart[runs]} = rows). */
    private final int[] runStart;
    private int runs;

    TiledAttention(LlamaConfig cfg, Kernels kernels, int workers, int maxRows, KvCodec kCodec, KvCodec vCodec) {
        this.kernels = kernels;
        this.cfg = cfg;
        this.kWide = kCodec.type() == dgr.engine.KvCacheType.F32 ? null : kCodec;
        this.vWide = vCodec.type() == dgr.engine.KvCacheType.F32 ? null : vCodec;
        this.kTile = new float[kWide == null ? 0 : workers][TILE * cfg.headDim()];
        this.vTile = new float[vWide == null ? 0 : workers][TILE * cfg.headDim()];
        this.hd = cfg.headDim();
        this.kvd = cfg.kvDim();
        this.qd = cfg.qDim();
        this.nHeadKv = cfg.nHeadKv();
        this.heads = cfg.nHead() / cfg.nHeadKv();
        this.scale = cfg.multipliers().attentionScale(hd);
        this.cap = cfg.softcaps().attention();
        this.tileScores = new float[workers][RUN * heads * TILE];
        this.state = new float[workers][2 * RUN * heads];
        this.runStart = new int[maxRows + 1];
    }

    /** Splits the batch's rows into runs: same slot, consecutive positions, at most {@link #RUN} rows. */
    void plan(KvSlot[] rowSlot, int[] rowPos, int nRows) {
        runs = 0;
        for (int r = 0; r < nRows; r++) {
            boolean joins = r > 0 && rowSlot[r] == rowSlot[r - 1] && rowPos[r] == rowPos[r - 1] + 1 && r - runStart[runs - 1] < RUN;
            if (!joins) runStart[runs++] = r;
        }
        runStart[runs] = nRows;
    }

    /** Work items of the planned batch: runs × K/V heads. */
    int items() {
        return runs * nHeadKv;
    }

    /**
     * Item {@code it}: attention of every row of its run for its K/V head, into
     * {@code att[r·qDim + h·hd ..]} for the query heads {@code h} sharing it.
     */
    void item(int it, int worker, int layer, LlamaConfig.SlidingWindow window, float[] sinks, float[] q, float[] att,
              KvSlot[] rowSlot, int[] rowPos) {
        int run = it / nHeadKv, kh = it % nHeadKv;
        int r0 = runStart[run], r1 = runStart[run + 1];
        KvSlot slot = rowSlot[r0];
        float[] sc = tileScores[worker], st = state[worker];
        int first = Integer.MAX_VALUE;
        for (int r = r0; r < r1; r++) {
            first = Math.min(first, window != null ? window.start(rowPos[r]) : 0);
            int qo = r * qd + kh * heads * hd;
            java.util.Arrays.fill(att, qo, qo + heads * hd, 0f);
            for (int g = 0; g < heads; g++) {
                int i = 2 * ((r - r0) * heads + g);
                st[i] = Float.NEGATIVE_INFINITY;
                st[i + 1] = 0f;
            }
        }
        int last = rowPos[r1 - 1];
        int kOff = kh * hd * 8;
        OnlineSoftmax.Capper capper = LlamaConfig.Softcaps::apply;
        for (int ta = first - first % TILE; ta <= last; ta += TILE) {
            // Float32 pages are read in place (row stride kvd, the head at its offset); a compact
            // type's tile is widened once for the run into one head's floats (row stride hd).
            float[] kp, vp;
            int kStride = kvd, kHead = kOff, vStride = kvd, vHead = kh * hd;
            if (kWide == null && vWide == null) {
                kp = (float[]) slot.kPage(layer, ta);
                vp = (float[]) slot.vPage(layer, ta);
            } else {
                int j0 = Math.max(ta, first) - ta, j1 = Math.min(ta + TILE, last + 1) - ta;
                if (kWide == null) {
                    kp = (float[]) slot.kPage(layer, ta);
                } else {
                    kp = kTile[worker];
                    kWide.decodeK(slot.kPage(layer, ta), j0 & ~7, (j1 + 7) & ~7, kh, hd, kp);
                    kStride = hd;
                    kHead = 0;
                }
                if (vWide == null) {
                    vp = (float[]) slot.vPage(layer, ta);
                } else {
                    vp = vTile[worker];
                    vWide.decodeV(slot.vPage(layer, ta), j0, j1, kh, hd, vp);
                    vStride = hd;
                    vHead = 0;
                }
            }
            for (int r = r0; r < r1; r++) {
                int pos = rowPos[r];
                int lo = Math.max(ta, window != null ? window.start(pos) : 0), hi = Math.min(ta + TILE, pos + 1);
                if (lo >= hi) continue;
                int so = (r - r0) * heads * TILE, qo = r * qd + kh * heads * hd;
                int tb = lo - lo % 8;
                kernels.scores(q, qo, heads, hd, kp, KvSlot.kBlock(tb, kStride) + kHead, 8 * kStride, (hi - tb + 7) / 8, sc, so + tb - ta, TILE);
                for (int g = 0; g < heads; g++) {
                    OnlineSoftmax.tile(sc, so + g * TILE, ta, lo, hi, scale, cap, capper, st, 2 * ((r - r0) * heads + g),
                            att, qo + g * hd, hd);
                }
                kernels.weightedV(sc, so - ta, TILE, heads, lo, hi, vp, KvSlot.pageOffset(lo, vStride) + vHead, vStride, att, qo, hd);
            }
        }
        for (int r = r0; r < r1; r++) {
            int qo = r * qd + kh * heads * hd;
            for (int g = 0; g < heads; g++) {
                float sink = sinks == null ? 0f : sinks[kh * heads + g];
                OnlineSoftmax.finish(st, 2 * ((r - r0) * heads + g), sinks != null, sink, att, qo + g * hd, hd);
            }
        }
    }
}
