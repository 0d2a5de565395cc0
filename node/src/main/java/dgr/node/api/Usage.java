package dgr.node.api;

import dgr.runtime.Accounting;

/**
 * OpenAI's usage block, filled from a session's exact accounting. {@code recomputedTokens} (dgr's
 * own field, written only when not 0) counts positions a route computed a second time after one of
 * its stages failed: real work, apart from the prompt and completion tokens, which count once.
 */
public record Usage(int promptTokens, int completionTokens, int cachedTokens, int recomputedTokens) {
    public Usage(int promptTokens, int completionTokens, int cachedTokens) {
        this(promptTokens, completionTokens, cachedTokens, 0);
    }

    public static Usage of(Accounting a) {
        return new Usage(a.promptTokens(), a.generatedTokens(), a.cachedTokens(), a.recomputedTokens());
    }

    public int totalTokens() { return promptTokens + completionTokens; }
}
