package dgr.node.stage;

import dgr.engine.Engine;
import dgr.engine.Recipe;
import dgr.engine.sampler.LogitBias;
import dgr.engine.sampler.SamplerConfig;
import dgr.node.stage.wire.Sampling;

/** Facts both ends of a stage stream agree on, and the conversions between wire and engine types. */
final class Wire {
    /**
     * The protocol version in {@code Open.protocol}, as in the proto package ({@code dgr.stage.v2}): 2 added
     * {@code Pulse}, which a stage of version 1 would take for an empty reply, ten times a second.
     */
    static final int PROTOCOL = 2;
    /** Session ids of a head's warm-up rows start with this. */
    static final String WARM_PREFIX = "warm-";

    /** Whether a session id is a head's warm-up session ({@link RouteWarmUp}). */
    static boolean isWarmUp(String session) { return session.startsWith(WARM_PREFIX); }

    private Wire() {}

    /**
     * The recipe id of the whole model the span belongs to (same artifact, context, state dtype,
     * rope; span {@code [0, n_layers)}): equal on every stage of a route.
     */
    static String modelRecipeId(Engine engine) {
        Recipe r = engine.recipe();
        return new Recipe(r.artifactSha256(), r.architecture(), 0, r.nLayers(), r.nLayers(), r.contextLength(),
                r.stateDtype(), r.rope()).id();
    }

    static Sampling sampling(SamplerConfig c) { return sampling(c, LogitBias.none()); }

    static Sampling sampling(SamplerConfig c, LogitBias bias) {
        Sampling.Builder b = Sampling.newBuilder();
        for (int i = 0; i < bias.tokens().length; i++) b.addBiasTokens(bias.tokens()[i]).addBiasValues(bias.values()[i]);
        return b.setTemperature(c.temperature()).setTopK(c.topK()).setTopP(c.topP()).setMinP(c.minP())
                .setRepeatPenalty(c.repeatPenalty()).setPresencePenalty(c.presencePenalty())
                .setFrequencyPenalty(c.frequencyPenalty()).setPenaltyLastN(c.penaltyLastN()).setSeed(c.seed()).build();
    }

    /** The logit bias of an open; its own checks name a bad entry. */
    static LogitBias logitBias(Sampling s) {
        if (s.getBiasTokensCount() != s.getBiasValuesCount()) {
            throw new IllegalArgumentException(s.getBiasTokensCount() + " logit bias tokens but " + s.getBiasValuesCount() + " values");
        }
        if (s.getBiasTokensCount() == 0) return LogitBias.none();
        int[] t = new int[s.getBiasTokensCount()];
        float[] v = new float[t.length];
        for (int i = 0; i < t.length; i++) {
            t[i] = s.getBiasTokens(i);
            v[i] = s.getBiasValues(i);
        }
        return new LogitBias(t, v);
    }

    /** The sampler settings of an open; their own checks name a bad value. */
    static SamplerConfig samplerConfig(Sampling s) {
        return new SamplerConfig(s.getTemperature(), s.getTopK(), s.getTopP(), s.getMinP(), s.getRepeatPenalty(),
                s.getPresencePenalty(), s.getFrequencyPenalty(), s.getPenaltyLastN(), s.getSeed());
    }
}
