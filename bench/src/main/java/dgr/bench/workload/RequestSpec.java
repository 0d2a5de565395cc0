package dgr.bench.workload;

/**
 * One request the load generator sends: the prompt as token ids (random workloads, JSONL with ids)
 * or as text (JSONL prompts), and how many tokens to generate. Generation always runs to
 * {@code maxTokens} (end-of-generation ignored) so every level does the work it claims.
 *
 * @param promptIds  token ids, or null when {@code promptText} is set
 * @param promptText text, or null when {@code promptIds} is set
 * @param maxTokens  tokens to generate
 * @param probe      a tiny request of the probe client (reported apart from the load)
 */
public record RequestSpec(int[] promptIds, String promptText, int maxTokens, boolean probe) {
    public RequestSpec {
        if ((promptIds == null) == (promptText == null)) throw new IllegalArgumentException("need ids or text, not both");
        if (maxTokens < 1) throw new IllegalArgumentException("maxTokens must be >= 1");
    }

    /** Prompt length in tokens when known before tokenization (ids), else -1. */
    public int knownPromptTokens() { return promptIds == null ? -1 : promptIds.length; }
}
