package dgr.runtime;

/**
 * Chooses a session's next token from its logits. Each session owns its sampler (and the sampler
 * its seeded RNG), so a session's tokens do not depend on its neighbours in a batch. Called only on
 * the scheduler thread. The node adapts the engine's sampler to this interface.
 */
@FunctionalInterface
public interface TokenSampler {
    /** The next token id, given {@code width} logits at {@code logits[offset..]} (valid only during the call). */
    int sample(float[] logits, int offset, int width);

    /**
     * The settings that rebuild this sampler elsewhere (a route's last stage samples for the head),
     * or null when it cannot travel.
     */
    default dgr.engine.sampler.SamplerConfig portableConfig() { return null; }
}
