package dgr.engine;

/**
 * One session's state on one stage (its K/V or V4 state). Attention for a row reads only its own
 * slot. A slot grows as positions are written; {@link #bytes()} always equals
 * {@code layout.bytesForTokens(length())}. Closing frees it (idempotent).
 */
public interface StateSlot extends AutoCloseable {
    /** Positions stored so far. */
    int length();

    /** Maximum positions this slot can hold (the recipe's context length). */
    int capacity();

    /** State bytes held now. */
    long bytes();

    /** Forgets positions {@code >= length} (used to re-run or roll back); never grows. */
    void truncate(int length);

    boolean isClosed();

    @Override
    void close();
}
