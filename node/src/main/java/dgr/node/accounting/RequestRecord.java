package dgr.node.accounting;

/**
 * A node's exact accounting of one request the tracker sent it, under the tracker's request id.
 *
 * @param requestId       the tracker's request id ({@code X-Dgr-Request-Id})
 * @param model           the model that served it
 * @param tenant          the tenant it was charged to
 * @param promptTokens    prompt tokens processed (a resumed session's prompt includes the resumed tokens)
 * @param cachedTokens    prompt tokens served from cache
 * @param generatedTokens tokens sampled, whether or not the client received them (a cut stream's too)
 * @param deliveredTokens tokens whose chunk (or whole response) was written to the client
 * @param finishReason    stop, length, cancelled or error; null while the request runs
 * @param message         why it was cancelled or failed, else null
 * @param startedMs       when it was submitted (epoch ms)
 * @param endedMs         when its session ended (epoch ms), or -1 while it runs
 */
public record RequestRecord(String requestId, String model, String tenant, int promptTokens, int cachedTokens,
                            int generatedTokens, int deliveredTokens, String finishReason, String message,
                            long startedMs, long endedMs) {
    public boolean finished() { return finishReason != null; }
}
