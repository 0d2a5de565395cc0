package dgr.runtime;

/**
 * The one rule for whether a request fits a session's context: its state slot holds the prompt and
 * every generated token but the last, which is sampled and returned but never fed back. So a prompt of
 * P tokens may ask for up to {@code context - P + 1} new tokens. The scheduler refuses what breaks it;
 * the node asks it for the default length and never checks on its own.
 */
public final class ContextRule {
    private ContextRule() {}

    /** Positions a session's slot needs for a prompt of {@code promptTokens} and {@code maxTokens} new tokens. */
    public static long positions(int promptTokens, int maxTokens) {
        return (long) promptTokens + maxTokens - 1;
    }

    /** The most new tokens a prompt of {@code promptTokens} leaves room for (0 or less: none). */
    public static long mostNewTokens(int promptTokens, int contextLength) {
        return (long) contextLength - promptTokens + 1;
    }

    /** Why a request does not fit, in words a client reads, or null when it fits. */
    static String violation(int promptTokens, int maxTokens, int contextLength) {
        long over = positions(promptTokens, maxTokens) - contextLength;
        if (over <= 0) return null;
        if (mostNewTokens(promptTokens, contextLength) < 1) {
            return "This model's maximum context length is " + contextLength + " tokens. However, your prompt has "
                    + promptTokens + " tokens, leaving no room for completion.";
        }
        return "This model's maximum context length is " + contextLength + " tokens. However, your prompt ("
                + promptTokens + " tokens) with max_tokens " + maxTokens + " needs " + (over + contextLength)
                + " (the last generated token is not kept): at most " + mostNewTokens(promptTokens, contextLength)
                + " new tokens fit. Please reduce the prompt or max_tokens.";
    }
}
