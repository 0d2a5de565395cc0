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
 * @param recomputedTokens positions a route computed a second time after one of its stages failed
 *                         (the dead span's rows replayed to its replacement): real work, kept apart
 *                         from the tokens above, which each count once
 */
public record Accounting(int promptLength, int promptTokens, int cachedTokens, int generatedTokens, long queueNanos,
                         long ttftNanos, long[] interTokenNanos, int recomputedTokens) {

    /** A session no stage failure touched (one node, or a route that never failed over). */
    public Accounting(int promptLength, int promptTokens, int cachedTokens, int generatedTokens, long queueNanos,
                      long ttftNanos, long[] interTokenNanos) {
        this(promptLength, promptTokens, cachedTokens, generatedTokens, queueNanos, ttftNanos, interTokenNanos, 0);
    }

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
