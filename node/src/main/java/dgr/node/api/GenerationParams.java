package dgr.node.api;

import java.util.List;

/**
 * What completions and chat requests share, checked and typed.
 *
 * @param model        the model id the caller named
 * @param maxTokens    most generated tokens, or null for the endpoint's default
 * @param sampling     sampler settings
 * @param stop         stop strings (at most 4, none empty)
 * @param stream       stream the answer as server-sent events
 * @param includeUsage with {@code stream}: send a last chunk carrying the usage block
 * @param user         OpenAI's end-user id, or null
 */
public record GenerationParams(String model, Integer maxTokens, SamplingParams sampling, List<String> stop,
                               boolean stream, boolean includeUsage, String user, boolean ignoreEos) {
    public GenerationParams {
        stop = List.copyOf(stop);
    }
}
