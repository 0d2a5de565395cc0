package dgr.tracker.ledger;

/** A reservation that does not fit the key's budget left: the front door answers 429 with this message. */
public final class BudgetExceededException extends Exception {
    public BudgetExceededException(String message) { super(message); }
}
