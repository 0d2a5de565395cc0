package dgr.node.model;

import dgr.engine.sampler.GreedySampler;
import dgr.engine.sampler.LogitBias;
import dgr.engine.sampler.Sampler;
import dgr.engine.sampler.SamplerConfig;
import dgr.engine.sampler.TokenSampler;
import dgr.node.api.ApiError;
import dgr.node.api.SamplingParams;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A session's sampler from a request's settings over the server's defaults (llama-server's way: a field
 * the request omits takes {@code dgr serve}'s value, which is {@code dgr run}'s unless told otherwise).
 * The scheduler calls the engine's sampler directly: no adapter, no copy of the logits row.
 * Penalties see the session's generated tokens (the last {@code repeat_last_n}), not the prompt.
 */
final class Samplers {
    private Samplers() {}

    static TokenSampler of(SamplingParams p, SamplerConfig defaults, int vocabSize, int contextLength) {
        float temperature = p.temperature() != null ? p.temperature().floatValue() : defaults.temperature();
        float repeat = p.repeatPenalty() != null ? p.repeatPenalty().floatValue() : defaults.repeatPenalty();
        boolean penalties = repeat != 1f || p.presencePenalty() != 0 || p.frequencyPenalty() != 0;
        int lastN = p.repeatLastN() == null ? defaults.penaltyLastN()
                : p.repeatLastN() < 0 ? contextLength : Math.min(p.repeatLastN(), contextLength);
        if (temperature <= 0 && (!penalties || lastN == 0) && p.logitBias().isEmpty()) return GreedySampler.INSTANCE;
        long seed = p.seed() != null ? p.seed()
                : defaults.seed() >= 0 ? defaults.seed() : ThreadLocalRandom.current().nextLong();
        SamplerConfig config = new SamplerConfig(temperature,
                p.topK() != null ? p.topK() : defaults.topK(),
                p.topP() != null ? p.topP().floatValue() : defaults.topP(),
                p.minP() != null ? p.minP().floatValue() : defaults.minP(),
                repeat, (float) p.presencePenalty(), (float) p.frequencyPenalty(), penalties ? lastN : 0, seed);
        LogitBias bias = LogitBias.of(p.logitBias());
        if (bias.maxToken() >= vocabSize) {
            throw ApiError.invalid("logit_bias names token " + bias.maxToken() + ", outside this model's vocabulary of "
                    + vocabSize + " tokens.", "logit_bias");
        }
        return new Sampler(config, bias, vocabSize);
    }
}
