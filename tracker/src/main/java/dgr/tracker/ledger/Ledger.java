package dgr.tracker.ledger;

import java.util.Optional;

/**
 * The tracker's token ledger as its front door sees it: authenticate → reserve → (route, relay) →
 * settle. One row per request, keyed by request id (the idempotency key). Implementations write
 * through JDBC to SQLite or PostgreSQL; every method that changes a row has committed it when it
 * returns, so a settled row is durable before the final usage chunk leaves the tracker.
 *
 * <p>The request id travels to the node in the {@code X-Dgr-Request-Id} header; the node keeps its exact
 * accounting of recently finished request ids under it ({@code POST /v1/accounting}, node token), from
 * which open reservations are settled after a tracker crash.
 *
 * <p>Thread-safe: the front door calls it from many request threads at once, and two trackers may
 * share one database; budgets never overshoot across either.
 */
public interface Ledger extends AutoCloseable {
    /** Whether any API key exists: once one does, the front door refuses requests without a valid key. */
    boolean keysRequired();

    /**
     * The holder of a presented key, or empty when the key is unknown or revoked. Keys are stored
     * hashed and compared in constant time; a revoked key is refused from the moment it is revoked.
     */
    Optional<KeyHolder> authenticate(String presentedKey);

    /**
     * What an earlier request with this idempotency key produced, when one exists: the front door
     * answers a retry with the same body from it, and refuses a different body
     * ({@link IdempotencyConflictException}).
     */
    Optional<StoredResult> replay(String idempotencyKey, String bodySha256) throws IdempotencyConflictException;

    /**
     * Holds {@code start.reservedTokens()} (prompt bound + max_tokens) against the holder's budget before
     * routing, and writes the request's open row.
     *
     * @throws BudgetExceededException      when the tokens do not fit the budget left, or the key was revoked
     *                                       meanwhile (the front door answers 429)
     * @throws IdempotencyConflictException  when a request with this id is already in flight or ended (a
     *                                       retry racing its first attempt; the front door answers 422)
     */
    void reserve(RequestStart start) throws BudgetExceededException, IdempotencyConflictException;

    /** Records when the first token reached the client (time to first token in the row, written with the settlement). */
    void firstToken(String requestId, java.time.Instant at);

    /**
     * Writes the node's exact accounting, closes the row and releases what was reserved beyond it.
     * Idempotent per request id: settling a settled row changes nothing.
     */
    void settle(Settlement settlement);

    /**
     * Usage of one tenant's settled requests that arrived in {@code [from, to)} (either bound may be null),
     * or empty when this ledger keeps no accounts.
     */
    default Optional<LedgerReports.Usage> usage(String tenant, java.time.Instant from, java.time.Instant to) {
        return Optional.empty();
    }

    @Override
    void close();
}
