package dgr.engine.kernel;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * One tile of an online softmax: the scores of one query head against the key positions
 * {@code [lo, hi)} of a tile starting at position {@code ta} become weights {@code e^(s − m)}
 * against the running maximum {@code m}, the running sum and the output accumulated so far are
 * rescaled by {@code e^(m_old − m)}, and the tile's weights are summed. Every step is one fixed
 * sequence over the tile's own positions (8 lanes per block of 8 positions, blocks in order, the
 * lanes summed in a fixed tree), so a row's result depends only on its own scores and on tile
 * boundaries fixed by absolute position, never on the batch, the chunking or the worker.
 */
public final class OnlineSoftmax {
    private OnlineSoftmax() {}

    static final VectorSpecies<Float> F = FloatVector.SPECIES_256;
    static final VectorSpecies<Float> W = FloatVector.SPECIES_512;

    /**
     * Scores at {@code sc[base + (t − ta)]} for {@code t} in {@code [lo, hi)} (raw dot products;
     * the 8-aligned blocks around them are readable) become their weights; positions of those blocks
     * outside {@code [lo, hi)} become 0. {@code state[i]} is the running maximum (−∞ before the
     * first tile), {@code state[i + 1]} the running sum; the {@code hd} outputs at {@code acc[ao ..]}
     * are rescaled. Scores are multiplied by {@code scale}, then soft-capped when {@code cap != 0}
     * ({@code tanh(s/cap)·cap}, as {@code capper} does it, one position at a time).
     */
    public static void tile(float[] sc, int base, int ta, int lo, int hi, float scale, float cap, Capper capper,
                            float[] state, int i, float[] acc, int ao, int hd) {
        int j0 = (lo - ta) & ~7, j1 = hi - ta;
        if (cap != 0f) {
            for (int j = lo - ta; j < j1; j++) sc[base + j] = capper.apply(sc[base + j] * scale, cap);
        }
        // 16 positions per vector where the CPU has 512-bit vectors: the weights are lane-wise and
        // the maximum exact in any order, so only the sum's order matters, and it adds the two
        // 8-lane halves in block order as the 8-lane loop does.
        // The −∞ vectors are locals, not static finals: blending into a static final one boxed a vector
        // per block on JDK 25's C2 (96 bytes each, 1.8 MB of garbage per decode step of two llama-1b
        // sessions at depth ~140).
        int jEnd = (j1 + 7) & ~7, j = j0;
        FloatVector negInf = FloatVector.broadcast(F, Float.NEGATIVE_INFINITY), mx = negInf;
        float mxw = Float.NEGATIVE_INFINITY;
        if (SimdAttention.WIDE) {
            FloatVector negInfW = FloatVector.broadcast(W, Float.NEGATIVE_INFINITY), mw = negInfW;
            for (; j + 16 <= jEnd; j += 16) {
                FloatVector s = FloatVector.fromArray(W, sc, base + j);
                if (cap == 0f) s = s.mul(scale);
                s = negInfW.blend(s, W.indexInRange(ta + j - lo, hi - lo));
                s.intoArray(sc, base + j);
                mw = mw.max(s);
            }
            mxw = mw.reduceLanes(VectorOperators.MAX);
        }
        for (; j < jEnd; j += 8) {
            FloatVector s = FloatVector.fromArray(F, sc, base + j);
            if (cap == 0f) s = s.mul(scale);
            VectorMask<Float> in = F.indexInRange(ta + j - lo, hi - lo);
            s = negInf.blend(s, in);
            s.intoArray(sc, base + j);
            mx = mx.max(s);
        }
        float mOld = state[i], m = Math.max(mOld, Math.max(mxw, mx.reduceLanes(VectorOperators.MAX)));
        float alpha = mOld == Float.NEGATIVE_INFINITY ? 0f : Exp.exp(mOld - m);
        // The weights in place (16 lanes at a time where 512-bit vectors run: Exp gives each value the
        // same bits at either width), then summed block by block in order, as the 8-lane loop did. No
        // vector crosses the call (Exp says why): C2 found a vector exp too cold to inline into this
        // already large method (llama-1b, 2 sessions at depth ~140: 4.8 MB of garbage per decode step).
        Exp.exp(sc, base + j0, base + jEnd, m);
        FloatVector sum = FloatVector.zero(F);
        for (j = j0; j < jEnd; j += 8) sum = sum.add(FloatVector.fromArray(F, sc, base + j));
        state[i] = m;
        // sum8's tree written out: C2 stopped inlining calls in this method (node count), and no vector
        // crosses a call (Exp says why).
        float s0 = sum.lane(0), s1 = sum.lane(1), s2 = sum.lane(2), s3 = sum.lane(3);
        float s4 = sum.lane(4), s5 = sum.lane(5), s6 = sum.lane(6), s7 = sum.lane(7);
        state[i + 1] = state[i + 1] * alpha + (((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7)));
        if (alpha != 1f) scale(acc, ao, hd, alpha);
    }

    /**
     * The end of a row's softmax for one head: where a sink logit joins (gpt-oss: in the maximum
     * and the sum, weighing no value) it is folded in, then the outputs are divided by the sum.
     */
    public static void finish(float[] state, int i, boolean hasSink, float sink, float[] acc, int ao, int hd) {
        float m = state[i], sum = state[i + 1];
        if (hasSink) {
            float mf = Math.max(m, sink);
            float f = m == Float.NEGATIVE_INFINITY ? 0f : Exp.exp(m - mf);
            sum = sum * f + Exp.exp(sink - mf);
            if (f != 1f) scale(acc, ao, hd, f);
        }
        for (int c = 0; c < hd; c += 8) FloatVector.fromArray(F, acc, ao + c).div(sum).intoArray(acc, ao + c);
    }

    /** {@code acc[ao .. ao + hd)} times {@code f}: a row's output so far rescaled to a new maximum. */
    public static void scale(float[] acc, int ao, int hd, float f) {
        for (int c = 0; c < hd; c += 8) FloatVector.fromArray(F, acc, ao + c).mul(f).intoArray(acc, ao + c);
    }

    /** A score soft cap ({@code tanh(s/cap)·cap}), as the model's configuration states it. */
    @FunctionalInterface
    public interface Capper {
        float apply(float s, float cap);
    }
}
