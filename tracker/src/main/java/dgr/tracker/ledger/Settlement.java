package dgr.tracker.ledger;

import java.time.Instant;
import java.util.List;

/**
 * The exact usage of a finished request, from the node's accounting.
 *
 * @param requestId        the request's id
 * @param recipeId         the recipe that served it (of the head stage for a route)
 * @param nodes            the nodes (and, for routes, stages) that served it, in order; several after a failover
 * @param promptTokens     prompt tokens processed (billed)
 * @param cachedTokens     prompt tokens served from cache
 * @param generatedTokens  tokens generated (billed)
 * @param deliveredTokens  tokens the client received
 * @param recomputedTokens tokens computed again after a failover: recorded apart, not billed
 * @param outcome          how it ended
 * @param httpStatus       the HTTP status the client got (200 for streams whose headers went out), replayed with resultJson
 * @param resultJson       the response body (non-streaming) or the final chunk's usage, for idempotent replay; may be null
 * @param end              when it ended
 */
public record Settlement(String requestId, String recipeId, List<String> nodes, long promptTokens, long cachedTokens,
                         long generatedTokens, long deliveredTokens, long recomputedTokens, Outcome outcome, int httpStatus,
                         String resultJson, Instant end) {
    /** How a request ended: finished by a stop sequence or EOS, by max_tokens, cancelled by the client or a deadline, failed, or cut (the client went away mid-stream). */
    public enum Outcome { STOP, LENGTH, CANCELLED, FAILED, CUT }
}
