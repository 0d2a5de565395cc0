package dgr.tracker;

import dgr.tracker.ledger.KeyHolder;
import dgr.tracker.ledger.Ledger;
import dgr.tracker.ledger.RequestStart;
import dgr.tracker.ledger.Settlement;
import dgr.tracker.ledger.StoredResult;
import java.time.Instant;
import java.util.Optional;

/**
 * A tracker that keeps no accounts: no keys (every client is anonymous), no replay, no budget, nothing
 * written. What {@code dgr tracker} runs with until a durable ledger is configured.
 */
public final class NoLedger implements Ledger {
    @Override
    public boolean keysRequired() { return false; }

    @Override
    public Optional<KeyHolder> authenticate(String presentedKey) { return Optional.empty(); }

    @Override
    public Optional<StoredResult> replay(String idempotencyKey, String bodySha256) { return Optional.empty(); }

    @Override
    public void reserve(RequestStart start) {}

    @Override
    public void firstToken(String requestId, Instant at) {}

    @Override
    public void settle(Settlement settlement) {}

    @Override
    public void close() {}
}
