package dgr.node.model;

import dgr.engine.sampler.Sampler;
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
        SamplerConfig config = new SamplerConfig((float) p.temperature(), 0, (float) p.topP(), 0f, 1f,
                (float) p.presencePenalty(), (float) p.frequencyPenalty(), penalties ? contextLength : 0, seed);
        return new EngineSampler(new Sampler(config, vocabSize), vocabSize);
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

        /** A route's last stage rebuilds this sampler from its settings (the k-th draw depends only on seed and k). */
        @Override
        public SamplerConfig portableConfig() { return sampler.config(); }
    }
}
