package dgr.node.api;

/**
 * How a request wants its tokens chosen (OpenAI's names and defaults).
 *
 * @param temperature      0 = greedy; default 1
 * @param topP             nucleus mass in (0, 1]; default 1
 * @param seed             the session's RNG seed, or null for a fresh one per request
 * @param presencePenalty  OpenAI's presence penalty in [-2, 2]; default 0
 * @param frequencyPenalty OpenAI's frequency penalty in [-2, 2]; default 0
 */
public record SamplingParams(double temperature, double topP, Long seed, double presencePenalty,
                             double frequencyPenalty) {
    public boolean greedy() { return temperature == 0.0; }
}
