package dgr.node.api;

import java.util.Map;

/**
 * How a request wants its tokens chosen: what it said, field by field, with null where it said
 * nothing, so the server's defaults ({@code dgr serve --temp --top-k ...}, the same as {@code dgr run}'s)
 * fill the rest. Names follow OpenAI, with llama-server's and vLLM's extensions.
 *
 * @param temperature      0 = greedy; [0, 2]
 * @param topP             nucleus mass in (0, 1]
 * @param topK             keep the k most likely tokens; 0 = off
 * @param minP             keep tokens at least this times as likely as the most likely; [0, 1], 0 = off
 * @param repeatPenalty    llama.cpp's repeat penalty (vLLM: repetition_penalty); 1 = off
 * @param repeatLastN      how many recent tokens the penalties see; 0 = none, -1 = the whole context
 * @param seed             the session's seed
 * @param presencePenalty  OpenAI's presence penalty in [-2, 2]; default 0
 * @param frequencyPenalty OpenAI's frequency penalty in [-2, 2]; default 0
 * @param logitBias        token id → value added to its logit, in [-100, 100]; empty = none
 */
public record SamplingParams(Double temperature, Double topP, Integer topK, Double minP, Double repeatPenalty,
                             Integer repeatLastN, Long seed, double presencePenalty, double frequencyPenalty,
                             Map<Integer, Float> logitBias) {
    public SamplingParams {
        logitBias = Map.copyOf(logitBias);
    }

    /** Nothing said: every setting is the server's default. */
    public static SamplingParams unset() {
        return new SamplingParams(null, null, null, null, null, null, null, 0, 0, Map.of());
    }
}
