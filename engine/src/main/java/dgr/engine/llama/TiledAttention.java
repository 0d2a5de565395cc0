package dgr.engine.llama;

import dgr.engine.kernel.ArrayPrefetch;
import dgr.engine.kernel.HeapAlignment;
import dgr.engine.kernel.HeapSegments;
import dgr.engine.kernel.Kernels;
import dgr.engine.kernel.NativeAttention;
import dgr.engine.kernel.OnlineSoftmax;
import dgr.engine.kernel.RowLanes;
import java.lang.foreign.MemorySegment;

/**
 * Causal attention over fixed tiles of key positions (a K/V page each, 64 positions from a
 * multiple of 64) with an online softmax ({@link OnlineSoftmax}). Rows of one slot at consecutive
 * positions form runs of up to {@link #RUN} rows, and up to {@link #SEGMENT_RUNS} runs that
 * continue one another form a segment (a prompt chunk); a work item is one K/V head of a segment,
 * and workers claim a few items at a time. Each tile's K and V are read once from memory and then
 * from L1 or L2 for every row of the segment and every query head sharing the K/V head, where
 * scoring all positions before the softmax read a long context's K and V from memory once per row.
 * Per row and head the sequence is fixed: tiles in position
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
 * ({@code q8_0}) of f32's, and each widened tile serves every run of the segment and every query head.
 * A decode row widens 16-position stretches instead of whole tiles (two K blocks just before they are
 * scored, a V stretch just before it is summed), so what it widens stays in L1.
 * With an f16 or bf16 cache it prefetches each stretch's lines of its heads one stretch ahead
 * ({@link ArrayPrefetch}).
 */
final class TiledAttention {
    static final int TILE = KvLayout.PAGE_TOKENS;
    /** Rows per run at most: a vector's lanes ({@link RowLanes#LANES}). */
    static final int RUN = 16;
    /**
     * Runs of one slot taken together at most (64 rows, the scheduler's prompt chunk): each tile is read
     * from memory (and a compact type's widened) once for all of them.
     */
    static final int SEGMENT_RUNS = 4;
    /** Where the row-lanes arrays' data start: a 32-byte boundary ({@link RowLanes} says why). */
    private static final int PAD = HeapAlignment.FLOAT_PAD;

    private final Kernels kernels;
    private final LlamaConfig cfg;
    /** How K and V pages store their values; null where they are float32 and read in place. */
    private final KvCodec kWide, vWide;
    /**
     * Whether a decode step prefetches the next K block pair or V stretch of its heads while it
     * widens the current one ({@link ArrayPrefetch}: {@code short[]} pages of K and V).
     */
    private final boolean prefetch;
    /** A decode step's f16/bf16 tiles in native code, or null (the Java stretches); the shape of its calls; K's and V's type. */
    private final NativeAttention half;
    private final NativeAttention.Shape halfShape;
    private final boolean kBf16, vBf16;
    /** A prompt's runs of rows in lanes in native code ({@link NativeAttention#laneScores} and its two), or null (the Java kernels, {@link RowLanes}). */
    private final NativeAttention laneKernel;
    /** Per worker: heap segments over the arrays the native kernels read and write in place. */
    private final HeapSegments[] heapSegments;
    /** Per worker: K and V of one tile (every K/V head at most), widened to floats (compact cache types). */
    private final float[][] kTile, vTile;
    /** Per worker, for a decode step: {@link #K_STRETCH} positions of K and {@link #V_STRETCH} of V, every K/V head at most, widened. */
    private final float[][] kStretch, vStretch;
    private final int hd, kvd, qd, heads, nHeadKv;
    private final float scale, cap;
    /** Per worker: scores of one row's heads for one tile, {@code TILE} per head (each row's are used up before the next's). */
    private final float[][] tileScores;
    /** Per worker: scores of one row's query heads (all K/V heads) for one tile, {@code TILE} per head. */
    private final float[][] oneScores;
    private final Tile[] tiles;
    /**
     * Per worker, for runs of several rows with the rows in vector lanes ({@link RowLanes}; null where the
     * kernels or the model do not allow it): transposed queries, a tile's scores and weights, running
     * maxima and sums, rescale factors, the lanes' position ranges and sums of 8-position lanes, and the
     * outputs transposed like the queries.
     */
    private final float[][] laneOut, laneQ, laneScores, laneState, laneAlpha, laneLo, laneHi, laneSums;
    /** Per worker, row-lanes path: each run's lane ranges in a tile and the runs' position ranges ({@link #lanes}). */
    private final float[][] segLo, segHi;
    private final int[][] segRange;
    /** Per worker: running maximum and sum per (row, query head) of a segment. */
    private final float[][] state;
    /** Row where run {@code i} starts ({@code runStart[runs]} = rows). */
    private final int[] runStart;
    /** Run where segment {@code i} starts: runs of one slot at consecutive positions, {@link #SEGMENT_RUNS} at most. */
    private final int[] segStart;
    /** Claims of work: items {@code [claimFrom[c], claimTo[c])}, segment × K/V heads. */
    private final int[] claimFrom, claimTo;
    private int runs, segments, claims;
    /** K/V heads per claim: a run of one row (a decode step) splits its heads in two; a segment of prompt rows in quarters. */
    private final int oneRowClaim, segmentClaim;

    TiledAttention(LlamaConfig cfg, Kernels kernels, int workers, int maxRows, KvCodec kCodec, KvCodec vCodec) {
        this.kernels = kernels;
        this.cfg = cfg;
        this.kWide = kCodec.type() == dgr.engine.KvCacheType.F32 ? null : kCodec;
        this.vWide = vCodec.type() == dgr.engine.KvCacheType.F32 ? null : vCodec;
        this.prefetch = ArrayPrefetch.ENABLED && kWide instanceof KvCodec.Halves && vWide instanceof KvCodec.Halves;
        boolean halves = kWide instanceof KvCodec.Halves && vWide instanceof KvCodec.Halves && cfg.headDim() % 16 == 0;
        this.half = halves ? kernels.nativeAttention() : null;
        int perKv = cfg.nHead() / cfg.nHeadKv();
        this.halfShape = half == null ? null : new NativeAttention.Shape(perKv, cfg.headDim(), TILE, perKv * TILE);
        this.kBf16 = kCodec.type() == dgr.engine.KvCacheType.BF16;
        this.vBf16 = vCodec.type() == dgr.engine.KvCacheType.BF16;
        this.kTile = new float[kWide == null ? 0 : workers][TILE * cfg.kvDim()];
        this.vTile = new float[vWide == null ? 0 : workers][TILE * cfg.kvDim()];
        // The stretches serve the Java path only: the native kernel widens inside its loops.
        this.kStretch = new float[kWide == null || half != null ? 0 : workers][K_STRETCH * cfg.kvDim()];
        this.vStretch = new float[vWide == null || half != null ? 0 : workers][V_STRETCH * cfg.kvDim()];
        this.hd = cfg.headDim();
        this.kvd = cfg.kvDim();
        this.qd = cfg.qDim();
        this.nHeadKv = cfg.nHeadKv();
        this.heads = cfg.nHead() / cfg.nHeadKv();
        this.scale = cfg.multipliers().attentionScale(hd);
        this.cap = cfg.softcaps().attention();
        this.tileScores = new float[workers][heads * TILE];
        this.oneScores = new float[workers][cfg.nHead() * TILE];
        this.heapSegments = new HeapSegments[workers];
        for (int w = 0; w < workers; w++) heapSegments[w] = new HeapSegments();
        this.tiles = new Tile[workers];
        for (int w = 0; w < workers; w++) tiles[w] = new Tile();
        boolean lanes = kernels.rowLanes() && cap == 0f && hd % 4 == 0;
        int R = RowLanes.LANES, n = lanes ? workers : 0;
        NativeAttention nk = kernels.nativeAttention();
        this.laneKernel = lanes ? nk : null;
        this.oneRowClaim = Math.max(1, (nHeadKv + 1) / 2);
        this.segmentClaim = Math.max(1, nHeadKv / 4);
        this.laneQ = lanes ? new float[n][PAD + SEGMENT_RUNS * segmentClaim * heads * hd * R] : null;
        this.laneOut = lanes ? new float[n][PAD + SEGMENT_RUNS * segmentClaim * heads * hd * R] : null;
        this.segLo = lanes ? new float[n][SEGMENT_RUNS * R] : null;
        this.segHi = lanes ? new float[n][SEGMENT_RUNS * R] : null;
        this.segRange = lanes ? new int[n][SEGMENT_RUNS * 3] : null;
        this.laneScores = lanes ? new float[n][PAD + heads * TILE * R] : null;
        this.laneState = lanes ? new float[n][SEGMENT_RUNS * segmentClaim * heads * 2 * R] : null;
        this.laneAlpha = lanes ? new float[n][heads * R] : null;
        this.laneLo = lanes ? new float[n][R] : null;
        this.laneHi = lanes ? new float[n][R] : null;
        this.laneSums = lanes ? new float[n][9 * R] : null;
        this.state = new float[workers][2 * SEGMENT_RUNS * RUN * cfg.nHead()];
        this.runStart = new int[maxRows + 1];
        this.segStart = new int[maxRows + 1];
        this.claimFrom = new int[maxRows * nHeadKv];
        this.claimTo = new int[maxRows * nHeadKv];
    }

    /**
     * Splits the batch's rows into runs (same slot, consecutive positions, at most {@link #RUN} rows),
     * the runs into segments (up to {@link #SEGMENT_RUNS} runs that continue one another), and the
     * segments' K/V heads into claims.
     */
    void plan(KvSlot[] rowSlot, int[] rowPos, int nRows) {
        runs = 0;
        segments = 0;
        for (int r = 0; r < nRows; r++) {
            boolean joins = r > 0 && rowSlot[r] == rowSlot[r - 1] && rowPos[r] == rowPos[r - 1] + 1;
            if (!joins || r - runStart[runs - 1] == RUN) {
                if (!joins || runs - segStart[segments - 1] == SEGMENT_RUNS) segStart[segments++] = runs;
                runStart[runs++] = r;
            }
        }
        runStart[runs] = nRows;
        segStart[segments] = runs;
        claims = 0;
        for (int g = 0; g < segments; g++) {
            int span = runStart[segStart[g + 1]] - runStart[segStart[g]] == 1 ? oneRowClaim : segmentClaim;
            for (int kh = 0; kh < nHeadKv; kh += span) {
                claimFrom[claims] = g * nHeadKv + kh;
                claimTo[claims++] = g * nHeadKv + Math.min(nHeadKv, kh + span);
            }
        }
    }

    /** Claims of work in the planned batch. */
    int claims() {
        return claims;
    }

    /** Claim {@code c}: its items' attention ({@link #items}). */
    void claim(int c, int worker, int layer, LlamaConfig.SlidingWindow window, float[] sinks, float[] q, float[] att,
               KvSlot[] rowSlot, int[] rowPos) {
        items(claimFrom[c], claimTo[c], worker, layer, window, sinks, q, att, rowSlot, rowPos);
    }

    /**
     * Items {@code [from, to)}, all of one segment ({@code from / nHeadKv == (to − 1) / nHeadKv}):
     * attention of every row of the segment for the items' K/V heads, into {@code att[r·qDim + h·hd ..]}
     * for the query heads {@code h} sharing each. The K/V heads are walked together tile by tile, so a
     * worker reads a page's stretches of adjacent heads in turn (which the hardware prefetchers
     * follow) where one head over all tiles read 256 bytes of every 2 KiB of V and waited on memory
     * at long contexts. Each (row, query head) still sees its tiles in position order with the same
     * operations: the same bits.
     */
    void items(int from, int to, int worker, int layer, LlamaConfig.SlidingWindow window, float[] sinks, float[] q, float[] att,
               KvSlot[] rowSlot, int[] rowPos) {
        int seg = from / nHeadKv, kh0 = from % nHeadKv, kh1 = kh0 + (to - from);
        int u0 = segStart[seg], u1 = segStart[seg + 1], r0 = runStart[u0], r1 = runStart[u1];
        if (r1 - r0 > 1 && laneQ != null) {
            lanes(u0, u1, kh0, kh1, worker, layer, window, q, att, rowSlot[r0], rowPos);
            finish(r0, r1, kh0, kh1, worker, sinks, att);
            return;
        }
        float[] st = state[worker];
        for (int r = r0; r < r1; r++) {
            int qo = r * qd + kh0 * heads * hd;
            java.util.Arrays.fill(att, qo, qo + (kh1 - kh0) * heads * hd, 0f);
        }
        for (int i = 0, n = (r1 - r0) * (kh1 - kh0) * heads; i < n; i++) {
            st[2 * i] = Float.NEGATIVE_INFINITY;
            st[2 * i + 1] = 0f;
        }
        if (r1 - r0 == 1) {
            oneRow(r0, kh0, kh1, worker, layer, window, q, att, rowSlot[r0], rowPos[r0]);
        } else {
            rows(r0, r1, kh0, kh1, worker, layer, window, q, att, rowSlot[r0], rowPos);
        }
        finish(r0, r1, kh0, kh1, worker, sinks, att);
    }

    /** Rows {@code [r0, r1)}' outputs divided by their sums (a sink joining first), from the worker's state. */
    private void finish(int r0, int r1, int kh0, int kh1, int worker, float[] sinks, float[] att) {
        float[] st = state[worker];
        for (int r = r0; r < r1; r++) {
            for (int kh = kh0; kh < kh1; kh++) {
                int qo = r * qd + kh * heads * hd, si = 2 * ((r - r0) * (kh1 - kh0) + (kh - kh0)) * heads;
                for (int g = 0; g < heads; g++) {
                    float sink = sinks == null ? 0f : sinks[kh * heads + g];
                    OnlineSoftmax.finish(st, si + 2 * g, sinks != null, sink, att, qo + g * hd, hd);
                }
            }
        }
    }

    /** The first position any row of {@code [r0, r1)} sees (its window's start, or 0). */
    private static int firstVisible(LlamaConfig.SlidingWindow window, int[] rowPos, int r0, int r1) {
        int first = Integer.MAX_VALUE;
        for (int r = r0; r < r1; r++) first = Math.min(first, window != null ? window.start(rowPos[r]) : 0);
        return first;
    }

    /**
     * A segment of several rows (a prompt chunk, up to {@link #SEGMENT_RUNS} runs) one row at a time, where
     * the row-lanes path does not run (256-bit vectors without the native image, soft-capped scores): per
     * tile and K/V head, every row, so the head's tile (K and V, 32 KiB at 64 values a head; a compact type's widened once) is read
     * from memory once per chunk and from L1 or L2 for the other rows.
     */
    private void rows(int r0, int r1, int kh0, int kh1, int worker, int layer, LlamaConfig.SlidingWindow window,
                      float[] q, float[] att, KvSlot slot, int[] rowPos) {
        float[] sc = tileScores[worker], st = state[worker];
        int first = firstVisible(window, rowPos, r0, r1);
        int last = rowPos[r1 - 1];
        OnlineSoftmax.Capper capper = LlamaConfig.Softcaps::apply;
        for (int ta = first - first % TILE; ta <= last; ta += TILE) {
            int j0 = Math.max(ta, first) - ta, j1 = Math.min(ta + TILE, last + 1) - ta;
            for (int kh = kh0; kh < kh1; kh++) {
                Tile t = tile(worker, slot, layer, ta, j0, j1, kh);
                int stBase = 2 * (kh - kh0) * heads;
                for (int r = r0; r < r1; r++) {
                    int pos = rowPos[r];
                    int lo = Math.max(ta, window != null ? window.start(pos) : 0), hi = Math.min(ta + TILE, pos + 1);
                    if (lo >= hi) continue;
                    int qo = r * qd + kh * heads * hd;
                    int si = stBase + 2 * (r - r0) * (kh1 - kh0) * heads;
                    int tb = lo - lo % 8;
                    kernels.scores(q, qo, heads, hd, t.k, KvSlot.kBlock(tb, t.kStride) + t.kHead, 8 * t.kStride, (hi - tb + 7) / 8,
                            sc, tb - ta, TILE);
                    for (int g = 0; g < heads; g++) {
                        OnlineSoftmax.tile(sc, g * TILE, ta, lo, hi, scale, cap, capper, st, si + 2 * g, att, qo + g * hd, hd);
                    }
                    kernels.weightedV(sc, -ta, TILE, heads, lo, hi, t.v, KvSlot.pageOffset(lo, t.vStride) + t.vHead, t.vStride,
                            att, qo, hd);
                }
            }
        }
    }

    /**
     * A segment of runs (a prompt chunk of up to 64 rows) with each run's rows in the lanes of vectors
     * ({@link RowLanes}; 512-bit, or two halves of 256 in the AVX2 image): per tile and K/V head, for every
     * run of the segment, the scores of all its rows and four query heads at a time (each K value loaded once for them), the softmax step of each
     * head for all rows at once, then the weighted values of all rows at once into outputs kept
     * transposed until the last tile ({@link RowLanes#weightedVT}). Each tile is read from memory once
     * for the segment and from L1 or L2 for its other runs (at 4096 positions the context's K and V are
     * 16 MiB a layer, read once per run before). The same bits as {@link #rows}: each element's
     * operations and their order are kept (a rescale by exactly 1 and an FMA of weight 0 at a position
     * a row does not see leave its output as it was).
     */
    private void lanes(int u0, int u1, int kh0, int kh1, int worker, int layer, LlamaConfig.SlidingWindow window,
                       float[] q, float[] att, KvSlot slot, int[] rowPos) {
        final int R = RowLanes.LANES;
        int nk = kh1 - kh0, r0 = runStart[u0], r1 = runStart[u1];
        // Per run: its transposed queries and outputs (qs floats each), its running maxima and sums (ss floats).
        int qs = nk * heads * hd * R, ss = nk * heads * 2 * R;
        float[] qT = laneQ[worker], sT = laneScores[worker], ls = laneState[worker], alpha = laneAlpha[worker];
        float[] lo = laneLo[worker], hi = laneHi[worker], sums = laneSums[worker], oT = laneOut[worker];
        float[] runLo = segLo[worker], runHi = segHi[worker];
        int[] range = segRange[worker];
        // The native kernels' segments over this worker's fixed arrays, looked up once per call (the pages' per tile).
        HeapSegments seg = heapSegments[worker];
        MemorySegment qTSeg = null, sTSeg = null, loSeg = null, hiSeg = null, lsSeg = null, alphaSeg = null, oTSeg = null;
        if (laneKernel != null) {
            qTSeg = seg.of(qT);
            sTSeg = seg.of(sT);
            loSeg = seg.of(lo);
            hiSeg = seg.of(hi);
            lsSeg = seg.of(ls);
            alphaSeg = seg.of(alpha);
            oTSeg = seg.of(oT);
        }
        for (int u = u0; u < u1; u++) {
            int ru = u - u0;
            RowLanes.transpose(q, qd, runStart[u], runStart[u + 1] - runStart[u], kh0 * heads * hd, nk * heads * hd, qT, PAD + ru * qs);
            for (int i = 0; i < nk * heads; i++) {
                java.util.Arrays.fill(ls, ru * ss + i * 2 * R, ru * ss + i * 2 * R + R, Float.NEGATIVE_INFINITY);
                java.util.Arrays.fill(ls, ru * ss + i * 2 * R + R, ru * ss + (i + 1) * 2 * R, 0f);
            }
        }
        java.util.Arrays.fill(oT, PAD, PAD + (u1 - u0) * qs, 0f);
        int first = firstVisible(window, rowPos, r0, r1);
        int last = rowPos[r1 - 1];
        for (int ta = first - first % TILE; ta <= last; ta += TILE) {
            // Each run's lanes' positions in this tile, relative to it (none: [TILE, 0)); lanes past a run see none.
            boolean any = false;
            for (int u = u0; u < u1; u++) {
                int ru = u - u0, n = runStart[u + 1] - runStart[u], pLo = TILE, pHi = 0, masked = 0;
                for (int r = 0; r < R; r++) {
                    int l = TILE, h = 0;
                    if (r < n) {
                        int pos = rowPos[runStart[u] + r];
                        l = Math.max(ta, window != null ? window.start(pos) : 0) - ta;
                        h = Math.min(ta + TILE, pos + 1) - ta;
                        if (l < h) {
                            pLo = Math.min(pLo, l);
                            pHi = Math.max(pHi, h);
                            if (l > 0 || h < TILE) masked = 1;
                        } else {
                            l = TILE;
                            h = 0;
                        }
                    }
                    runLo[ru * R + r] = l;
                    runHi[ru * R + r] = h;
                }
                // The weighted values run over the positions some lane sees; the scores over whole blocks of 8.
                range[ru * 3] = pLo;
                range[ru * 3 + 1] = pHi;
                range[ru * 3 + 2] = masked;
                any |= pLo < pHi;
            }
            if (!any) continue;
            int j0 = Math.max(ta, first) - ta, j1 = Math.min(ta + TILE, last + 1) - ta;
            for (int kh = kh0; kh < kh1; kh++) {
                Tile t = tile(worker, slot, layer, ta, j0, j1, kh);
                for (int u = u0; u < u1; u++) {
                    int ru = u - u0, vLo = range[ru * 3], vHi = range[ru * 3 + 1];
                    if (vLo >= vHi) continue;
                    System.arraycopy(runLo, ru * R, lo, 0, R);
                    System.arraycopy(runHi, ru * R, hi, 0, R);
                    int pLo = vLo & ~7, pHi = (vHi + 7) & ~7, qo = PAD + ru * qs + (kh - kh0) * heads * hd * R;
                    int vBase = KvSlot.pageOffset(ta + vLo, t.vStride) + t.vHead, so = ru * ss + (kh - kh0) * heads * 2 * R;
                    boolean masked = range[ru * 3 + 2] != 0;
                    if (laneKernel != null) {
                        MemorySegment kSeg = seg.of(t.k), vSeg = seg.of(t.v);
                        laneKernel.laneScores(qTSeg, qo, heads, hd, kSeg, t.kHead, 8 * t.kStride, pLo, pHi, scale, sTSeg, PAD, TILE);
                        laneKernel.laneSoftmax(sTSeg, PAD, heads, TILE, pLo, pHi, masked, loSeg, hiSeg, lsSeg, so, alphaSeg);
                        laneKernel.laneWeighted(sTSeg, PAD, TILE, heads, vLo, vHi, vSeg, vBase, t.vStride, oTSeg, qo, hd, alphaSeg);
                    } else {
                        RowLanes.scores(qT, qo, heads, hd, t.k, t.kHead, 8 * t.kStride, pLo, pHi, scale, sT, PAD, TILE);
                        for (int g = 0; g < heads; g++) RowLanes.softmax(sT, PAD + g * TILE * R, pLo, pHi, masked, lo, hi, ls, so + g * 2 * R, alpha, g * R, sums);
                        RowLanes.weightedVT(sT, PAD, TILE, heads, vLo, vHi, t.v, vBase, t.vStride, oT, qo, hd, alpha);
                    }
                }
            }
        }
        // Each run's outputs back into rows, its lanes' maxima and sums into the per-row state that finish reads.
        float[] st = state[worker];
        for (int u = u0; u < u1; u++) {
            int ru = u - u0, n = runStart[u + 1] - runStart[u];
            RowLanes.untranspose(oT, PAD + ru * qs, n, nk * heads * hd, att, qd, runStart[u], kh0 * heads * hd);
            for (int r = 0; r < n; r++) {
                int sr = runStart[u] + r - r0;
                for (int i = 0; i < nk * heads; i++) {
                    st[2 * (sr * nk * heads + i)] = ls[ru * ss + i * 2 * R + r];
                    st[2 * (sr * nk * heads + i) + 1] = ls[ru * ss + i * 2 * R + R + r];
                }
            }
        }
    }

    /**
     * A run of one row (a decode step): per tile, the scores of every K/V head block after block,
     * then their softmax steps, then the weighted values {@link #V_STRETCH} positions at a time for
     * every head, so K and V are read in address order, a stretch of adjacent heads at a time. Each
     * output element's FMAs still run over the positions in order (its partial sum stored between
     * stretches, exactly): the same bits as one call per tile. Where {@link #prefetch}, each block pair
     * and stretch first prefetches the next one's lines of these heads (the last V stretch the next
     * tile's first block pair), so its memory reads overlap this one's widening and arithmetic.
     */
    private void oneRow(int r, int kh0, int kh1, int worker, int layer, LlamaConfig.SlidingWindow window,
                        float[] q, float[] att, KvSlot slot, int pos) {
        float[] sc = oneScores[worker], st = state[worker];
        int first = window != null ? window.start(pos) : 0;
        OnlineSoftmax.Capper capper = LlamaConfig.Softcaps::apply;
        int qBase = r * qd, hs = heads * TILE;
        int nh = kh1 - kh0;
        if (prefetch) {
            int ta = first - first % TILE, tb = first - first % 8;
            prefetchK(slot.kPage(layer, ta), tb, Math.min(K_BLOCKS, (Math.min(ta + TILE, pos + 1) - tb + 7) / 8), kh0, nh);
        }
        if (half != null) {
            for (int ta = first - first % TILE; ta <= pos; ta += TILE) {
                halfTile((KvCodec.Halves.Page) slot.kPage(layer, ta), (KvCodec.Halves.Page) slot.vPage(layer, ta), slot, layer, pos, q, att, qBase,
                        kh0, kh1, ta, Math.max(ta, first), Math.min(ta + TILE, pos + 1), worker, capper);
            }
            return;
        }
        float[] kBuf = kWide == null ? null : kStretch[worker], vBuf = vWide == null ? null : vStretch[worker];
        // Where each head's K and V of a stretch are: a float32 page in place (heads side by side in
        // each block and row), else the stretch buffers, head by head (KvCodec's decode layout).
        int kHeadStep = kWide == null ? 8 * hd : K_STRETCH * hd, kBlockStride = kWide == null ? 8 * kvd : 8 * hd;
        int vHeadStep = vWide == null ? hd : V_STRETCH * hd, vStride = vWide == null ? kvd : hd;
        for (int ta = first - first % TILE; ta <= pos; ta += TILE) {
            int lo = Math.max(ta, first), hi = Math.min(ta + TILE, pos + 1);
            int tb = lo - lo % 8, blocks = (hi - tb + 7) / 8;
            Object kPage = slot.kPage(layer, ta), vPage = slot.vPage(layer, ta);
            // K a stretch (two blocks of 8 positions) at a time: a compact type's widened into kBuf just before
            // it is scored (16 KiB for 4 heads, in L1), where widening the whole tile first wrote
            // 64 KiB per worker and read it back from L2.
            float[] k = kWide == null ? (float[]) kPage : kBuf;
            for (int b = 0; b < blocks; b += K_BLOCKS) {
                int nb = Math.min(K_BLOCKS, blocks - b), j = tb - ta + 8 * b, kb;
                if (prefetch) {
                    if (b + K_BLOCKS < blocks) prefetchK(kPage, tb + 8 * (b + K_BLOCKS), Math.min(K_BLOCKS, blocks - b - K_BLOCKS), kh0, nh);
                    else prefetchV(vPage, lo, Math.min(hi, (lo / V_STRETCH + 1) * V_STRETCH), kh0, nh);
                }
                if (kWide == null) {
                    kb = KvSlot.kBlock(tb + 8 * b, kvd) + kh0 * hd * 8;
                } else {
                    kWide.decodeK(kPage, j, j + 8 * nb, kh0, kh1, kBuf, j, K_STRETCH);
                    kb = 0;
                }
                for (int kh = kh0; kh < kh1; kh++) {
                    kernels.scores(q, qBase + kh * heads * hd, heads, hd, k, kb + (kh - kh0) * kHeadStep, kBlockStride, nb,
                            sc, (kh - kh0) * hs + tb - ta + 8 * b, TILE);
                }
            }
            softmaxSteps(sc, st, att, qBase, kh0, kh1, ta, lo, hi, capper);
            // V a stretch at a time, a compact type's widened into vBuf (16 positions, in L1) first.
            float[] v = vWide == null ? (float[]) vPage : vBuf;
            for (int t0 = lo, t1; t0 < hi; t0 = t1) {
                t1 = Math.min(hi, (t0 / V_STRETCH + 1) * V_STRETCH);
                if (prefetch) {
                    if (t1 < hi) {
                        prefetchV(vPage, t1, Math.min(hi, t1 + V_STRETCH), kh0, nh);
                    } else if (ta + TILE <= pos) {
                        int nt = ta + TILE;
                        prefetchK(slot.kPage(layer, nt), nt, Math.min(2, (Math.min(nt + TILE, pos + 1) - nt + 7) / 8), kh0, nh);
                    }
                }
                int vo;
                if (vWide == null) {
                    vo = KvSlot.pageOffset(t0, kvd) + kh0 * hd;
                } else {
                    vWide.decodeV(vPage, t0 - ta, t1 - ta, kh0, kh1, vBuf, t0 - ta, V_STRETCH);
                    vo = 0;
                }
                for (int kh = kh0; kh < kh1; kh++) {
                    kernels.weightedV(sc, (kh - kh0) * hs - ta, TILE, heads, t0, t1, v, vo + (kh - kh0) * vHeadStep, vStride,
                            att, qBase + kh * heads * hd, hd);
                }
            }
        }
    }

    /** Each head's online-softmax step over a decode step's tile {@code [lo, hi)} (scores of K/V head {@code kh} at {@code (kh - kh0)·heads·TILE}). */
    private void softmaxSteps(float[] sc, float[] st, float[] att, int qBase, int kh0, int kh1, int ta, int lo, int hi,
                              OnlineSoftmax.Capper capper) {
        for (int kh = kh0; kh < kh1; kh++) {
            for (int g = 0; g < heads; g++) {
                OnlineSoftmax.tile(sc, (kh - kh0) * heads * TILE + g * TILE, ta, lo, hi, scale, cap, capper, st, 2 * ((kh - kh0) * heads + g),
                        att, qBase + (kh * heads + g) * hd, hd);
            }
        }
    }

    /**
     * A decode step's tile of an f16/bf16 cache through the native kernel ({@link NativeAttention}): the
     * scores of the tile's K blocks (its V prefetched meanwhile), the softmax steps in Java, then the
     * weighted V rows (the next tile's first K blocks prefetched meanwhile). The same bits as the stretches
     * of {@link #oneRow}'s Java path: widening is exact and each element's operations keep their order.
     */
    private void halfTile(KvCodec.Halves.Page kPage, KvCodec.Halves.Page vPage, KvSlot slot, int layer, int pos, float[] q, float[] att,
                          int qBase, int kh0, int kh1, int ta, int lo, int hi, int worker, OnlineSoftmax.Capper capper) {
        int nh = kh1 - kh0, tb = lo - lo % 8, blocks = (hi - tb + 7) / 8;
        float[] sc = oneScores[worker];
        HeapSegments seg = heapSegments[worker];
        int vLines = ((hi - lo) * hd * 2 + 63) / 64 + 1;
        half.scores(halfShape, kBf16, kPage.segment(), KvCodec.Halves.at(kh0, tb - ta, hd), seg.of(q), qBase + kh0 * heads * hd, seg.of(sc),
                tb - ta, nh, blocks, prefetch ? vPage.segment() : null, KvCodec.Halves.at(kh0, lo - ta, hd), vLines);
        softmaxSteps(sc, state[worker], att, qBase, kh0, kh1, ta, lo, hi, capper);
        int nt = ta + TILE;
        var next = prefetch && nt <= pos ? (KvCodec.Halves.Page) slot.kPage(layer, nt) : null;
        int kLines = next == null ? 0 : (Math.min(TILE, pos + 1 - nt) + 7) / 8 * 8 * hd * 2 / 64;
        half.weighted(halfShape, vBf16, vPage.segment(), KvCodec.Halves.at(kh0, lo - ta, hd), seg.of(sc), lo - ta, seg.of(att),
                qBase + kh0 * heads * hd, nh, hi - lo, next == null ? null : next.segment(), KvCodec.Halves.at(kh0, 0, hd), kLines);
    }

    /**
     * Prefetches {@code blocks} K blocks of 8 positions from position {@code tb} of a {@code short[]} page
     * ({@link KvCodec.Halves}: head by head), of {@code nh} heads from {@code kh0}: one run per head.
     */
    private void prefetchK(Object page, int tb, int blocks, int kh0, int nh) {
        ArrayPrefetch.shorts(((KvCodec.Halves.Page) page).values(), KvCodec.Halves.at(kh0, tb % TILE, hd), nh, TILE * hd, blocks * 8 * hd);
    }

    /** Prefetches the V rows of positions {@code [t0, t1)} of a {@code short[]} page, {@code nh} heads from {@code kh0}. */
    private void prefetchV(Object page, int t0, int t1, int kh0, int nh) {
        ArrayPrefetch.shorts(((KvCodec.Halves.Page) page).values(), KvCodec.Halves.at(kh0, t0 % TILE, hd), nh, TILE * hd, (t1 - t0) * hd);
    }

    /** Positions per stretch of a decode step's scores: two K blocks of 8; 16 positions' K of every head fit L1. */
    static final int K_STRETCH = 16;

    /** K blocks of 8 positions per {@link #K_STRETCH}. */
    private static final int K_BLOCKS = K_STRETCH / 8;

    /** Positions per stretch of a decode step's weighted values: 16 positions' V rows of every head fit L1. */
    static final int V_STRETCH = 16;

    /**
     * Where K/V head {@code kh} of one tile is read: a float32 page in place (row stride {@code kvd},
     * the head at its offset), or a compact type's page positions {@code [j0, j1)} widened into this
     * worker's tiles (row stride {@code hd}: the head alone).
     */
    private Tile tile(int worker, KvSlot slot, int layer, int ta, int j0, int j1, int kh) {
        Tile t = tiles[worker];
        if (kWide == null) {
            t.k = (float[]) slot.kPage(layer, ta);
            t.kStride = kvd;
            t.kHead = kh * hd * 8;
        } else {
            t.k = kTile[worker];
            kWide.decodeK(slot.kPage(layer, ta), j0 & ~7, (j1 + 7) & ~7, kh, kh + 1, t.k);
            t.kStride = hd;
            t.kHead = 0;
        }
        if (vWide == null) {
            t.v = (float[]) slot.vPage(layer, ta);
            t.vStride = kvd;
            t.vHead = kh * hd;
        } else {
            t.v = vTile[worker];
            vWide.decodeV(slot.vPage(layer, ta), j0, j1, kh, kh + 1, t.v);
            t.vStride = hd;
            t.vHead = 0;
        }
        return t;
    }

    /** A tile's K and V arrays, their row strides and the first head's offset (one per worker, reused). */
    private static final class Tile {
        float[] k, v;
        int kStride, kHead, vStride, vHead;
    }
}
