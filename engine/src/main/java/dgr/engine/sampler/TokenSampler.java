package dgr.engine.sampler;

/**
 * Chooses a session's next token from its logits, read in place from a row of the engine's output
 * buffer (no copy on the way). Each session owns its sampler (and the sampler its seeded draws), so a
 * session's tokens do not depend on its neighbours in a batch. The scheduler calls it on its own
 * thread; implementations: {@link GreedySampler} (argmax, shared) and {@link Sampler} (one per session).
 */
@FunctionalInterface
public interface TokenSampler {
    /** The next token id, given {@code width} logits at {@code logits[offset..]} (valid only during the call). */
    int sample(float[] logits, int offset, int width);

    /**
     * The settings that rebuild this sampler on a route's last stage, which samples for the head, or
     * null when it cannot travel (a logit bias, draws already made).
     */
    default SamplerConfig portableConfig() { return null; }

    /** The logit bias that travels with {@link #portableConfig()} (none unless the sampler has one). */
    default LogitBias portableBias() { return LogitBias.none(); }
}
