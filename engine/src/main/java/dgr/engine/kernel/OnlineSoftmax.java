package dgr.engine.kernel;

import jdk.incubator.vector.FloatVector;
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
        // 8 positions per vector. A 16-lane form of these loops (2026-12-02) allocated a few KB per
        // decode step on JDK 25's C2 (DecodeAllocationTest), so it is not used.
        // The −∞ vector is a local, not a static final: blending into a static final one boxed a vector
        // per block on JDK 25's C2 (96 bytes each, 1.8 MB of garbage per decode step of two llama-1b
        // sessions at depth ~140).
        int jEnd = (j1 + 7) & ~7;
        FloatVector negInf = FloatVector.broadcast(F, Float.NEGATIVE_INFINITY), mx = negInf;
        for (int j = j0; j < jEnd; j += 8) {
            FloatVector s = FloatVector.fromArray(F, sc, base + j);
            if (cap == 0f) s = s.mul(scale);
            if (ta + j < lo || ta + j + 8 > hi) s = negInf.blend(s, F.indexInRange(ta + j - lo, hi - lo));
            s.intoArray(sc, base + j);
            mx = mx.max(s);
        }
        float mOld = state[i], m = Math.max(mOld, mx.reduceLanes(VectorOperators.MAX));
        float alpha = mOld == Float.NEGATIVE_INFINITY ? 0f : Exp.exp(mOld - m);
        FloatVector mv = FloatVector.broadcast(F, m), sum = FloatVector.zero(F);
        for (int j = j0; j < jEnd; j += 8) {
            FloatVector p = Exp.exp(FloatVector.fromArray(F, sc, base + j).sub(mv));
            p.intoArray(sc, base + j);
            sum = sum.add(p);
        }
        state[i] = m;
        state[i + 1] = state[i + 1] * alpha + sum8(sum);
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

    private static void scale(float[] acc, int ao, int hd, float f) {
        for (int c = 0; c < hd; c += 8) FloatVector.fromArray(F, acc, ao + c).mul(f).intoArray(acc, ao + c);
    }

    /** {@code ((l0+l1)+(l2+l3))+((l4+l5)+(l6+l7))}. */
    private static float sum8(FloatVector v) {
        float l0 = v.lane(0), l1 = v.lane(1), l2 = v.lane(2), l3 = v.lane(3);
        float l4 = v.lane(4), l5 = v.lane(5), l6 = v.lane(6), l7 = v.lane(7);
        return ((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7));
    }

    /** A score soft cap ({@code tanh(s/cap)·cap}), as the model's configuration states it. */
    @FunctionalInterface
    public interface Capper {
        float apply(float s, float cap);
    }
}
