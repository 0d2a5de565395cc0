package dgr.node.accounting;

/**
 * A node's exact accounting of one request the tracker sent it, under the tracker's request id.
 *
 * @param requestId       the tracker's request id ({@code X-Dgr-Request-Id})
 * @param model           the model that served it
 * @param tenant          the tenant it was charged to
 * @param promptTokens    the request's prompt tokens processed (for a resumed session, of its own prompt only)
 * @param cachedTokens    prompt tokens served from cache
 * @param generatedTokens tokens sampled, whether or not the client received them (a cut stream's too); a
 *                        resumed session's count the tokens it resumed from
 * @param deliveredTokens tokens whose chunk (or whole response) was written to the client (resumed ones included)
 * @param recomputedTokens prompt tokens processed again because this session resumed another node's stream
 *                        (the request's prompt and the tokens delivered before); 0 for a fresh session
 * @param finishReason    stop, length, cancelled or error; null while the request runs
 * @param message         why it was cancelled or failed, else null
 * @param startedMs       when it was submitted (epoch ms)
 * @param endedMs         when its session ended (epoch ms), or -1 while it runs
 */
public record RequestRecord(String requestId, String model, String tenant, int promptTokens, int cachedTokens,
                            int generatedTokens, int deliveredTokens, int recomputedTokens, String finishReason,
                            String message,
                            long startedMs, long endedMs) {
    public boolean finished() { return finishReason != null; }
}
