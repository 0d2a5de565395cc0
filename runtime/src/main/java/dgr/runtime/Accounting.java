package dgr.runtime;

/**
 * What one session really consumed (DESIGN.md, contract 5), exact also for cancelled and failed
 * sessions. Every prompt token counted here went through a forward pass; every generated token was
 * sampled and streamed (only the last one is never fed back, so decode rows processed equal
 * {@code generatedTokens - 1} once the prompt is done).
 *
 * @param promptLength     prompt tokens submitted
 * @param promptTokens     prompt tokens processed (equals {@code promptLength} once prefill completed)
 * @param cachedTokens     prompt tokens served from a cache instead of processed (no cache yet: 0)
 * @param generatedTokens  tokens sampled and streamed, end-of-generation ids included
 * @param queueNanos       submission to admission (-1 if never admitted)
 * @param ttftNanos        submission to the first streamed token (-1 if none)
 * @param interTokenNanos  time between consecutive generated tokens ({@code generatedTokens - 1} entries)
 */
public record Accounting(int promptLength, int promptTokens, int cachedTokens, int generatedTokens, long queueNanos,
                         long ttftNanos, long[] interTokenNanos) {

    /** Rows this session had in forward passes. */
    public int processedRows() {
        return promptTokens + (promptTokens == promptLength && generatedTokens > 0 ? generatedTokens - 1 : 0);
    }

    /** Service in the fairness counter's units. */
    public long weightedService(int promptWeight, int generatedWeight) {
        return (long) promptWeight * promptTokens + (long) generatedWeight * generatedTokens;
    }

    @Override
    public long[] interTokenNanos() { return interTokenNanos.clone(); }
}
