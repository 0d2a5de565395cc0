package dgr.engine.deepseek4;

import java.util.Arrays;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

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
    /** This worker's buffers: the keys a row attends to, one head's scores, reduction lanes. */
    private float[][] keys = new float[64][];
    private float[] logit = new float[64];
    private final float[] lanes = new float[8];
    /** The indexer's choice (first {@code selectedCount}), its sort keys, the compressor's row indices and offsets. */
    private int[] selected = new int[64], rowIdx = new int[8], rowOff = new int[8];
    /** One channel block's {@code e^(s − max)}, 8 per compressed row ({@link #compress}). */
    private float[] exps = new float[64];
    private int selectedCount;
    private long[] order = new long[64];
    private static final VectorSpecies<Float> V = FloatVector.SPECIES_256;

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
        // A new array per position: rows of the same batch that attend later keep the one they saw.
        ls.window[p % c.nSwa()] = Arrays.copyOfRange(kv, r * d, r * d + d);
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
     * Channels run 8 to a vector: per channel the maximum over the rows, then row by row in order
     * {@code e = e^(s − max)} ({@link dgr.engine.kernel.Exp}), {@code den += e}, {@code num = fma(e, v, num)}.
     */
    private float[] compress(float[][] ringV, float[][] ringS, int blk, int ratio, int width, float[] norm) {
        float[] out = new float[width];
        int ring = ringV.length;
        boolean overlap = ratio == 4;
        int prevRows = overlap && blk > 0 ? ratio : 0;
        int co = overlap ? width : 0;
        int rows = prevRows + ratio;
        if (rowIdx.length < rows) {
            rowIdx = new int[rows];
            rowOff = new int[rows];
        }
        if (exps.length < 8 * rows) exps = new float[8 * rows];
        for (int j = 0; j < prevRows; j++) { rowIdx[j] = ((blk - 1) * ratio + j) % ring; rowOff[j] = 0; }
        for (int j = 0; j < ratio; j++) { rowIdx[prevRows + j] = (blk * ratio + j) % ring; rowOff[prevRows + j] = co; }
        for (int e = 0; e < width; e += V.length()) {
            FloatVector mx = FloatVector.broadcast(V, Float.NEGATIVE_INFINITY);
            for (int j = 0; j < rows; j++) mx = mx.max(FloatVector.fromArray(V, ringS[rowIdx[j]], rowOff[j] + e));
            // The exponentials through exps (Exp: arrays in and out, no vector crosses the call).
            for (int j = 0; j < rows; j++) FloatVector.fromArray(V, ringS[rowIdx[j]], rowOff[j] + e).sub(mx).intoArray(exps, 8 * j);
            dgr.engine.kernel.Exp.exp(exps, 0, 8 * rows, 0f);
            FloatVector den = FloatVector.zero(V), num = FloatVector.zero(V);
            for (int j = 0; j < rows; j++) {
                FloatVector ex = FloatVector.fromArray(V, exps, 8 * j);
                den = den.add(ex);
                num = ex.fma(FloatVector.fromArray(V, ringV[rowIdx[j]], rowOff[j] + e), num);
            }
            num.div(den).intoArray(out, e);
        }
        Dsv4Kernels.rmsNorm(out, 0, out, 0, width, norm, c.eps());
        ropeCompressed.apply(out, 0, width, blk * ratio, false);
        return out;
    }

    /**
     * Attention of row {@code r} at position {@code p} (2.3.4), heads {@code [h0, h1)}: its {@code nWindow} window rows
     * ({@code window[wo ..]}), then the indexer's blocks among the first {@code nIdx} (CSA) or the
     * first {@code nEntries} compressed entries (HCA). Per head: the scores, softmax weights with the
     * head's sink joining the maximum and the sum ({@link Dsv4Kernels#expSum}), the weighted keys
     * summed key by key in vectors ({@link Dsv4Kernels#axpy}: K = V), divided by the sum, and the
     * rope undone.
     *
     * <p>Where {@code chosen} is not null the indexer's choice is already made (its first {@code nChosen}
     * blocks, in block order): at batch 1 the row's heads run on all workers, and the choice, the same for
     * every head, is made once for them ({@link Dsv4Attention}).
     */
    void attendRow(Dsv4State.LayerState ls, Dsv4Weights.Layer L, int r, int p, float[][] window, int wo, int nWindow,
                   int nEntries, int nIdx, float[] q, float[] iq, float[] iw, float[] att, int h0, int h1, int[] chosen, int nChosen) {
        int d = c.headDim(), nh = c.nHead(), hd = nh * d;
        int nk = 0;
        keys = grow(keys, nWindow + nEntries);
        for (int s = 0; s < nWindow; s++) keys[nk++] = window[wo + s];
        if (L.ratio() == 4) {
            int[] sel = chosen;
            if (sel == null) {
                sel = selectBlocks(ls, nIdx, r, iq, iw);
                nChosen = selectedCount;
            }
            for (int i = 0; i < nChosen; i++) keys[nk++] = ls.entries.get(sel[i]);
        } else if (L.ratio() == 128) {
            for (int i = 0; i < nEntries; i++) keys[nk++] = ls.entries.get(i);
        }
        if (logit.length < nk) logit = new float[Math.max(nk, 2 * logit.length)];
        float scale = (float) (1.0 / Math.sqrt(d));
        float[] sinks = L.sinks();
        Dsv4Rope rope = L.ratio() == 0 ? ropeWindow : ropeCompressed;
        for (int h = h0; h < h1; h++) {
            int qo = r * hd + h * d;
            float mx = sinks[h];
            for (int j = 0; j < nk; j++) {
                logit[j] = dot(q, qo, keys[j], 0, d) * scale;
                mx = Math.max(mx, logit[j]);
            }
            float den = Dsv4Kernels.expSum(logit, 0, nk, mx, lanes) + dgr.engine.kernel.Exp.exp(sinks[h] - mx);
            int ao = r * hd + h * d;
            Arrays.fill(att, ao, ao + d, 0f);  // the caller's buffer is reused from earlier rows and layers
            for (int j = 0; j < nk; j++) {
                // Weights under e^-87 are 0 (Exp): they would be subnormal, an Intel microcode assist per multiply.
                if (logit[j] != 0f) Dsv4Kernels.axpy(logit[j], keys[j], 0, att, ao, d);
            }
            float inv = 1f / den;
            for (int i = 0; i < d; i++) att[ao + i] *= inv;
            rope.apply(att, ao, d, p, true);
        }
        java.util.Arrays.fill(keys, 0, nk, null);
    }

    /** Bytes of this worker's buffers (grown with the longest contexts seen; references at 4 bytes). */
    long bytes() {
        return 4L * (keys.length + logit.length + lanes.length + selected.length + rowIdx.length + rowOff.length + exps.length)
                + 8L * order.length;
    }

    private static float[][] grow(float[][] a, int n) {
        return a.length >= n ? a : new float[Math.max(n, 2 * a.length)][];
    }

    /**
     * Lightning indexer (2.3.3): the top-k visible blocks by {@code Σ_h iw_h·ReLU(iq_h·ik_b)}, ties
     * to the lower block, returned in block order. Scores sort as longs (the score's order-preserving
     * bits inverted above the block index), so no objects are made per row.
     */
    private int[] selectBlocks(Dsv4State.LayerState ls, int nvis, int r, float[] iq, float[] iw) {
        int topk = c.idxTopK();
        if (selected.length < Math.min(nvis, topk)) selected = new int[Math.max(topk, 64)];
        if (nvis > topk) {
            if (order.length < nvis) order = new long[Math.max(nvis, 2 * order.length)];
            scoreBlocks(ls, 0, nvis, r, iq, iw, order);
        }
        selectedCount = pick(order, nvis, topk, selected);
        return selected;
    }

    /**
     * The indexer's sort keys of blocks {@code [from, to)} for row {@code r} into {@code order[blk]}:
     * each block's score is its own sum over the heads, so blocks may be scored in any split.
     */
    void scoreBlocks(Dsv4State.LayerState ls, int from, int to, int r, float[] iq, float[] iw, long[] order) {
        int hi = c.idxHeads(), di = c.idxDim();
        for (int blk = from; blk < to; blk++) {
            float[] key = ls.idxKeys.get(blk);
            float s = 0f;
            for (int h = 0; h < hi; h++) {
                float dp = dot(iq, (r * hi + h) * di, key, 0, di);
                if (dp > 0f) s += iw[r * hi + h] * dp;
            }
            int bits = Float.floatToIntBits(s);
            int sortable = bits < 0 ? bits ^ 0x7fffffff : bits;  // Float.compare's order as an int
            order[blk] = ((long) ~sortable << 32) | blk;          // descending score, then ascending block
        }
    }

    /**
     * The top {@code topk} of {@code nvis} blocks scored into {@code order} (all of them, unscored,
     * when {@code nvis <= topk}) into {@code selected} in block order; returns how many.
     */
    static int pick(long[] order, int nvis, int topk, int[] selected) {
        if (nvis <= topk) {
            for (int i = 0; i < nvis; i++) selected[i] = i;
            return nvis;
        }
        Arrays.sort(order, 0, nvis);
        for (int i = 0; i < topk; i++) selected[i] = (int) order[i];
        Arrays.sort(selected, 0, topk);
        return topk;
    }

    private float dot(float[] a, int ao, float[] b, int bo, int n) {
        return simd ? Dsv4Kernels.dotSimd(a, ao, b, bo, n) : Dsv4Kernels.dotScalar(a, ao, b, bo, n);
    }
}
