package dgr.node.model;

import dgr.engine.sampler.Sampler;
import dgr.node.api.ApiError;
import dgr.engine.sampler.SamplerConfig;
import dgr.node.api.SamplingParams;
import dgr.runtime.GreedySampler;
import dgr.runtime.TokenSampler;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A session's {@link TokenSampler} from an API request's settings, over the engine's
 * {@link Sampler}. OpenAI's semantics: no top-k or min-p, temperature 0 is greedy, presence and
 * frequency penalties see every token generated so far (not the prompt), no seed = a fresh one.
 */
final class Samplers {
    private Samplers() {}

    static TokenSampler of(SamplingParams p, int vocabSize, int contextLength) {
        boolean penalties = p.presencePenalty() != 0 || p.frequencyPenalty() != 0;
        if (p.greedy() && !penalties) return GreedySampler.INSTANCE;
        long seed = p.seed() != null ? p.seed() : ThreadLocalRandom.current().nextLong();
        return new EngineSampler(new Sampler(config(p, contextLength, seed), vocabSize), vocabSize);
    }

    /**
     * The sampler of a session resumed elsewhere: the penalties have seen the tokens generated so far (as
     * the first node's had), and the next draw is draw {@code step}. Needs the original request's seed.
     */
    static TokenSampler resumed(SamplingParams p, int vocabSize, int contextLength, int[] generated, long step) {
        boolean penalties = p.presencePenalty() != 0 || p.frequencyPenalty() != 0;
        if (p.greedy() && !penalties) return GreedySampler.INSTANCE;
        if (p.seed() == null) {
            throw ApiError.invalid("A resumed session needs the seed of the original request ('seed').", "seed");
        }
        Sampler sampler = new Sampler(config(p, contextLength, p.seed()), vocabSize);
        for (int t : generated) sampler.accept(t);
        sampler.skipTo(step);
        return new EngineSampler(sampler, vocabSize);
    }

    private static SamplerConfig config(SamplingParams p, int contextLength, long seed) {
        boolean penalties = p.presencePenalty() != 0 || p.frequencyPenalty() != 0;
        return new SamplerConfig((float) p.temperature(), 0, (float) p.topP(), 0f, 1f, (float) p.presencePenalty(),
                (float) p.frequencyPenalty(), penalties ? contextLength : 0, seed);
    }

    /** Adapts the engine's whole-vocabulary sampler to the scheduler's (logits, offset, width) calls. */
    private static final class EngineSampler implements TokenSampler {
        private final Sampler sampler;
        private final float[] row;

        EngineSampler(Sampler sampler, int vocabSize) {
            this.sampler = sampler;
            this.row = new float[vocabSize];
        }

        @Override
        public int sample(float[] logits, int offset, int width) {
            if (width != row.length) {
                throw new IllegalArgumentException("expected " + row.length + " logits, got " + width);
            }
            System.arraycopy(logits, offset, row, 0, width);
            return sampler.sample(row);
        }
    }
}
