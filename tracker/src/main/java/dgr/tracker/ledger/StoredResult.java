package dgr.tracker.ledger;

/** What a settled request returned, replayed to a client that retries with the same idempotency key and body. */
public record StoredResult(String requestId, int httpStatus, String bodyJson) {}
