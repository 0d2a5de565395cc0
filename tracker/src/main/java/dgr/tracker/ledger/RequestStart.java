package dgr.tracker.ledger;

import java.time.Instant;

/**
 * A request as it enters the ledger, before routing.
 *
 * @param requestId      the idempotency key: the client's {@code Idempotency-Key} or one the tracker made
 * @param holder         the key's holder, or null when no keys are configured (anonymous, unbudgeted)
 * @param model          the model the client asked for
 * @param reservedTokens an upper bound of prompt tokens plus max_tokens, held against the budget
 * @param bodySha256     hash of the request body, so a retry with another body is refused
 * @param arrival        when the request reached the tracker
 */
public record RequestStart(String requestId, KeyHolder holder, String model, long reservedTokens,
                           String bodySha256, Instant arrival) {}
