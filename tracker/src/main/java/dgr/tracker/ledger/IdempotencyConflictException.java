package dgr.tracker.ledger;

/** An idempotency key reused with a different request body: the front door answers 422 with this message. */
public final class IdempotencyConflictException extends Exception {
    public IdempotencyConflictException(String message) { super(message); }
}
