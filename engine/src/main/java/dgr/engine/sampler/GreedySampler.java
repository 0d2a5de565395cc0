package dgr.engine.sampler;

/** Argmax; the lowest id wins ties, so greedy runs are reproducible to the token. */
public final class GreedySampler implements TokenSampler {
    public static final GreedySampler INSTANCE = new GreedySampler();

    private GreedySampler() {}

    @Override
    public SamplerConfig portableConfig() { return SamplerConfig.greedy(); }

    @Override
    public int sample(float[] logits, int offset, int width) {
        return argmax(logits, offset, width);
    }

    /** The index (from {@code offset}) of the largest of {@code width} logits; the lowest index on ties. */
    public static int argmax(float[] logits, int offset, int width) {
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
