package dgr.engine.sampler;

/**
 * How one session picks its next token, with llama.cpp's meanings.
 *
 * @param temperature      logits are divided by it before the draw; {@code <= 0} means greedy (argmax)
 * @param topK             keep the k most likely tokens; 0 = off
 * @param topP             keep the smallest most-likely set whose probability reaches p; 1 = off
 * @param minP             keep tokens at least {@code minP} times as likely as the most likely one; 0 = off
 * @param repeatPenalty    divides positive / multiplies non-positive logits of recent tokens; 1 = off
 * @param presencePenalty  subtracted once from the logit of every recent token; 0 = off
 * @param frequencyPenalty subtracted per occurrence among recent tokens; 0 = off
 * @param penaltyLastN     how many recent tokens the penalties look at; 0 = off
 * @param seed             seeds the session's random draws, so a seeded run repeats exactly
 */
public record SamplerConfig(
        float temperature,
        int topK,
        float topP,
        float minP,
        float repeatPenalty,
        float presencePenalty,
        float frequencyPenalty,
        int penaltyLastN,
        long seed) {
    // llama.cpp's defaults (common_params_sampling), which dgr run and dgr serve both start from.
    public static final float DEFAULT_TEMPERATURE = 0.8f;
    public static final int DEFAULT_TOP_K = 40;
    public static final float DEFAULT_TOP_P = 0.95f;
    public static final float DEFAULT_MIN_P = 0.05f;
    public static final float DEFAULT_REPEAT_PENALTY = 1f;
    public static final int DEFAULT_PENALTY_LAST_N = 64;

    public SamplerConfig {
        if (!Float.isFinite(temperature)) throw new IllegalArgumentException("temperature must be finite: " + temperature);
        if (topK < 0) throw new IllegalArgumentException("topK must be >= 0 (0 = off): " + topK);
        if (!(topP > 0 && topP <= 1)) throw new IllegalArgumentException("topP must be in (0, 1]: " + topP);
        if (!(minP >= 0 && minP <= 1)) throw new IllegalArgumentException("minP must be in [0, 1]: " + minP);
        if (!(repeatPenalty > 0) || !Float.isFinite(repeatPenalty)) {
            throw new IllegalArgumentException("repeatPenalty must be > 0 (1 = off): " + repeatPenalty);
        }
        if (!Float.isFinite(presencePenalty)) throw new IllegalArgumentException("presencePenalty must be finite");
        if (!Float.isFinite(frequencyPenalty)) throw new IllegalArgumentException("frequencyPenalty must be finite");
        if (penaltyLastN < 0) throw new IllegalArgumentException("penaltyLastN must be >= 0 (0 = off): " + penaltyLastN);
    }

    /** Always the most likely token (lowest id on ties). */
    public static SamplerConfig greedy() { return new SamplerConfig(0f, 0, 1f, 0f, 1f, 0f, 0f, 0, 0L); }

    /** llama.cpp's defaults: temperature 0.8, top-k 40, top-p 0.95, min-p 0.05, no penalties (last 64). */
    public static SamplerConfig llamaCppDefaults(long seed) {
        return new SamplerConfig(DEFAULT_TEMPERATURE, DEFAULT_TOP_K, DEFAULT_TOP_P, DEFAULT_MIN_P, DEFAULT_REPEAT_PENALTY,
                0f, 0f, DEFAULT_PENALTY_LAST_N, seed);
    }

    public boolean isGreedy() { return temperature <= 0; }

    boolean penalizes() {
        return penaltyLastN > 0 && (repeatPenalty != 1f || presencePenalty != 0f || frequencyPenalty != 0f);
    }

    public SamplerConfig withSeed(long newSeed) {
        return new SamplerConfig(temperature, topK, topP, minP, repeatPenalty, presencePenalty, frequencyPenalty,
                penaltyLastN, newSeed);
    }
}
