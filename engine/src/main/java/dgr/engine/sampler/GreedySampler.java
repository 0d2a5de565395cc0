package dgr.engine.sampler;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/** Argmax; the lowest id wins ties, so greedy runs are reproducible to the token. */
public final class GreedySampler implements TokenSampler {
    public static final GreedySampler INSTANCE = new GreedySampler();
    private static final VectorSpecies<Float> F = FloatVector.SPECIES_256;
    private static final VectorSpecies<Integer> I = IntVector.SPECIES_256;

    private GreedySampler() {}

    @Override
    public SamplerConfig portableConfig() { return SamplerConfig.greedy(); }

    @Override
    public int sample(float[] logits, int offset, int width) {
        return argmax(logits, offset, width);
    }

    /**
     * The index (from {@code offset}) of the largest of {@code width} logits; the lowest index on ties.
     *
     * <p>One vector pass that keeps, per lane of two accumulators, the largest value seen and the first
     * index holding it, then picks the lowest such index among the lanes holding the row's maximum. A
     * greedy token reads a whole vocabulary's row (llama-1b: 128,256 logits, 512 KB), which on a route's
     * last stage or a node that has just computed the row is no longer in this core's caches: one pass
     * reads it once (docs/stages.md, "The hop", has what two passes and one scalar pass cost).
     * The same index as the scalar pass in every case: a lane takes a value only when it is strictly
     * larger (ties, and 0.0 against -0.0, which compare equal, keep the first), and a NaN that sticks in a
     * lane (one in the first vectors, where the scalar pass may start on it) sends the row to the scalar
     * pass, which skips NaNs after the first logit; later NaNs are never taken, as in the scalar pass.
     */
    public static int argmax(float[] logits, int offset, int width) {
        int lanes = F.length(), step = 2 * lanes, bound = width - width % step;
        if (bound == 0) return scalarArgmax(logits, offset, width);
        IntVector at0 = IntVector.zero(I).addIndex(1), at1 = at0.add(lanes);
        FloatVector best0 = FloatVector.fromArray(F, logits, offset), best1 = FloatVector.fromArray(F, logits, offset + lanes);
        IntVector first0 = at0, first1 = at1;
        for (int i = step; i < bound; i += step) {
            at0 = at0.add(step);
            at1 = at1.add(step);
            FloatVector v0 = FloatVector.fromArray(F, logits, offset + i), v1 = FloatVector.fromArray(F, logits, offset + i + lanes);
            VectorMask<Float> up0 = v0.compare(VectorOperators.GT, best0), up1 = v1.compare(VectorOperators.GT, best1);
            best0 = best0.blend(v0, up0);
            best1 = best1.blend(v1, up1);
            first0 = first0.blend(at0, up0.cast(I));
            first1 = first1.blend(at1, up1.cast(I));
        }
        if (best0.test(VectorOperators.IS_NAN).or(best1.test(VectorOperators.IS_NAN)).anyTrue()) return scalarArgmax(logits, offset, width);
        float max = Math.max(best0.reduceLanes(VectorOperators.MAX), best1.reduceLanes(VectorOperators.MAX));
        int best = Math.min(first0.reduceLanes(VectorOperators.MIN, best0.eq(max).cast(I)),
                first1.reduceLanes(VectorOperators.MIN, best1.eq(max).cast(I)));
        for (int i = bound; i < width; i++) {
            float v = logits[offset + i];
            if (v > max) {
                max = v;
                best = i;
            }
        }
        return best;
    }

    /** The one-pass argmax: the reference, and the answer for rows with a NaN. */
    static int scalarArgmax(float[] logits, int offset, int width) {
        int best = 0;
        float bestValue = logits[offset];
        for (int i = 1; i < width; i++) {
            float v = logits[offset + i];
            if (v > bestValue) {
                bestValue = v;
                best = i;
            }
        }
        return best;
    }
}
