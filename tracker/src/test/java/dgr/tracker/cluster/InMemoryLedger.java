package dgr.tracker.cluster;

import dgr.tracker.ledger.KeyHolder;
import dgr.tracker.ledger.Ledger;
import dgr.tracker.ledger.RequestStart;
import dgr.tracker.ledger.Settlement;
import dgr.tracker.ledger.StoredResult;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/** A ledger in memory for tests of the request path: keys map to tenants, every call is recorded. */
public final class InMemoryLedger implements Ledger {
    private final Map<String, KeyHolder> keys = new ConcurrentHashMap<>();
    public final List<RequestStart> reserved = new CopyOnWriteArrayList<>();
    public final Map<String, Instant> firstTokens = new ConcurrentHashMap<>();
    public final List<Settlement> settled = new CopyOnWriteArrayList<>();

    public InMemoryLedger withKey(String key, String tenant) {
        keys.put(key, new KeyHolder("key-" + tenant, tenant));
        return this;
    }

    @Override
    public boolean keysRequired() { return !keys.isEmpty(); }

    @Override
    public Optional<KeyHolder> authenticate(String presentedKey) { return Optional.ofNullable(keys.get(presentedKey)); }

    @Override
    public Optional<StoredResult> replay(String idempotencyKey, String bodySha256) { return Optional.empty(); }

    @Override
    public void reserve(RequestStart start) { reserved.add(start); }

    @Override
    public void firstToken(String requestId, Instant at) { firstTokens.putIfAbsent(requestId, at); }

    @Override
    public void settle(Settlement settlement) { settled.add(settlement); }

    @Override
    public void close() {}
}
