package dgr.node.model;

import dgr.node.api.SamplingParams;
import dgr.runtime.GreedySampler;
import dgr.runtime.TokenSampler;

/** A session's sampler from the request's settings. */
final class Samplers {
    private Samplers() {}

    static TokenSampler of(SamplingParams p, int vocabSize) {
        return GreedySampler.INSTANCE;
    }
}
