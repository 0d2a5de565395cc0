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
        Settings s = settings(p, defaults, contextLength);
        if (s.greedy()) return GreedySampler.INSTANCE;
        long seed = p.seed() != null ? p.seed()
                : defaults.seed() >= 0 ? defaults.seed() : ThreadLocalRandom.current().nextLong();
        return new Sampler(s.config().withSeed(seed), bias(p, vocabSize), vocabSize);
    }

    /**
     * The sampler of a session resumed elsewhere: the penalties have seen the tokens generated so far (as
     * the first node's had), and the next draw is draw {@code step}. Needs the original request's seed
     * (or the server's fixed one).
     */
    static TokenSampler resumed(SamplingParams p, SamplerConfig defaults, int vocabSize, int contextLength,
                                int[] generated, long step) {
        Settings s = settings(p, defaults, contextLength);
        if (s.greedy()) return GreedySampler.INSTANCE;
        Long seed = p.seed() != null ? p.seed() : defaults.seed() >= 0 ? defaults.seed() : null;
        if (seed == null) {
            throw ApiError.invalid("A resumed session needs the seed of the original request ('seed').", "seed");
        }
        Sampler sampler = new Sampler(s.config().withSeed(seed), bias(p, vocabSize), vocabSize);
        for (int t : generated) sampler.accept(t);
        sampler.skipTo(step);
        return sampler;
    }

    /** @param greedy argmax does the same: no draw, no penalty, no bias */
    private record Settings(SamplerConfig config, boolean greedy) {}

    private static Settings settings(SamplingParams p, SamplerConfig defaults, int contextLength) {
        float temperature = p.temperature() != null ? p.temperature().floatValue() : defaults.temperature();
        float repeat = p.repeatPenalty() != null ? p.repeatPenalty().floatValue() : defaults.repeatPenalty();
        boolean penalties = repeat != 1f || p.presencePenalty() != 0 || p.frequencyPenalty() != 0;
        int lastN = p.repeatLastN() == null ? defaults.penaltyLastN()
                : p.repeatLastN() < 0 ? contextLength : Math.min(p.repeatLastN(), contextLength);
        SamplerConfig config = new SamplerConfig(temperature,
                p.topK() != null ? p.topK() : defaults.topK(),
                p.topP() != null ? p.topP().floatValue() : defaults.topP(),
                p.minP() != null ? p.minP().floatValue() : defaults.minP(),
                repeat, (float) p.presencePenalty(), (float) p.frequencyPenalty(), penalties ? lastN : 0, 0L);
        return new Settings(config, temperature <= 0 && (!penalties || lastN == 0) && p.logitBias().isEmpty());
    }

    private static LogitBias bias(SamplingParams p, int vocabSize) {
        LogitBias bias = LogitBias.of(p.logitBias());
        if (bias.maxToken() >= vocabSize) {
            throw ApiError.invalid("logit_bias names token " + bias.maxToken() + ", outside this model's vocabulary of "
                    + vocabSize + " tokens.", "logit_bias");
        }
        return bias;
    }
}
