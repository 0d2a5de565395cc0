package dgr.node.api;

import dgr.runtime.Accounting;

/** OpenAI's usage block, filled from a session's exact accounting. */
public record Usage(int promptTokens, int completionTokens, int cachedTokens) {
    public static Usage of(Accounting a) {
        return new Usage(a.promptTokens(), a.generatedTokens(), a.cachedTokens());
    }

    public int totalTokens() { return promptTokens + completionTokens; }
}
