package dgr.tracker.ledger;

/** The ledger's database failed (unreachable, full, corrupt): the front door answers 503, never bills blind. */
public final class LedgerException extends RuntimeException {
    public LedgerException(String message, Throwable cause) { super(message, cause); }
}
