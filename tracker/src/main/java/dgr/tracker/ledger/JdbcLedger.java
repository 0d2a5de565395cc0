package dgr.tracker.ledger;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The ledger on SQLite or PostgreSQL (docs/tracker.md, "The token ledger").
 *
 * <p>Reserve: one transaction inserts the request's open row and raises the key's
 * {@code reserved_tokens} by a conditional UPDATE that matches only while
 * {@code budget - spent - reserved >= asked}; the database serialises updates of the key's row (SQLite's
 * write lock, PostgreSQL's row lock with the condition re-checked on the locked row), so the sum of what
 * is spent and held never passes the budget, however many requests and trackers race. Settle: one
 * transaction closes the row only if it is still open (so a second settlement changes nothing), moves its
 * reservation to {@code spent_tokens} at the node's exact prompt + generated tokens, and releases the rest.
 * Each returns after its commit.
 */
public final class JdbcLedger implements Ledger {
    /** Tenant of requests made while no keys exist. */
    public static final String ANONYMOUS = "anonymous";

    private static final String OPEN = "open";
    private static final String SETTLED = "settled";

    /** An open reservation, as recovery sees it. */
    public record OpenRequest(String requestId, String tenant, String model, long reservedTokens, Instant arrival) {}

    private final LedgerDatabase db;
    private final ApiKeyStore keys;
    private final String trackerId;
    private volatile boolean keysSeen;
    private final java.util.concurrent.ConcurrentHashMap<String, Instant> firstTokens = new java.util.concurrent.ConcurrentHashMap<>();

    /**
     * @param trackerId names this tracker in the rows it opens (stable across its restarts, distinct between
     *                  trackers sharing a database), so recovery settles only its own open rows
     */
    public JdbcLedger(LedgerDatabase db, ApiKeyStore keys, String trackerId) {
        if (trackerId == null || trackerId.isBlank()) throw new IllegalArgumentException("trackerId must not be blank");
        this.db = db;
        this.keys = keys;
        this.trackerId = trackerId;
    }

    public String trackerId() { return trackerId; }

    /** The nodes this tracker has routed to, remembered in the same database (for recovery after a crash). */
    public NodeRoster roster() { return new NodeRoster(db, trackerId); }

    @Override
    public boolean keysRequired() {
        if (!keysSeen && keys.anyKey()) keysSeen = true;
        return keysSeen;
    }

    @Override
    public Optional<KeyHolder> authenticate(String presentedKey) { return keys.authenticate(presentedKey); }

    @Override
    public Optional<StoredResult> replay(String idempotencyKey, String bodySha256) throws IdempotencyConflictException {
        return Transactions.read(db, c -> {
            try (PreparedStatement ps = c.prepareStatement("SELECT body_sha256, state, outcome, http_status, result_json "
                    + "FROM requests WHERE request_id = ?")) {
                ps.setString(1, idempotencyKey);
                try (ResultSet rs = ps.executeQuery()) {
                    if (!rs.next()) return Optional.<StoredResult>empty();
                    if (!rs.getString(1).equals(bodySha256)) {
                        throw new IdempotencyConflictException("Idempotency-Key '" + idempotencyKey + "' was already "
                                + "used with a different request body; use a new key for a different request.");
                    }
                    if (OPEN.equals(rs.getString(2))) {
                        throw new IdempotencyConflictException("A request with Idempotency-Key '" + idempotencyKey
                                + "' is still in progress; retry after it ends.");
                    }
                    String result = rs.getString(5);
                    if (result == null) {
                        throw new IdempotencyConflictException("The request with Idempotency-Key '" + idempotencyKey
                                + "' ended (" + rs.getString(3).toLowerCase() + ") with no stored result; use a new key "
                                + "to run it again.");
                    }
                    return Optional.of(new StoredResult(idempotencyKey, rs.getInt(4), result));
                }
            }
        });
    }

    @Override
    public void reserve(RequestStart start) throws BudgetExceededException, IdempotencyConflictException {
        if (start.reservedTokens() < 0) throw new IllegalArgumentException("reservedTokens must be >= 0");
        KeyHolder holder = start.holder();
        try {
            Transactions.<Void, BudgetExceededException>inTransaction(db, c -> {
                insertOpenRow(c, start);
                if (holder != null && !holdBudget(c, holder.keyId(), start.reservedTokens())) {
                    throw new BudgetExceededException(refusal(c, holder.keyId(), start.reservedTokens()));
                }
                return null;
            });
        } catch (LedgerException e) {
            if (rowExists(start.requestId())) {
                throw new IdempotencyConflictException("A request with Idempotency-Key '" + start.requestId()
                        + "' is already in progress or ended; retry with the same body to get its result.");
            }
            throw e;
        }
    }

    private void insertOpenRow(Connection c, RequestStart s) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO requests (request_id, key_id, tenant, model, "
                + "body_sha256, state, tracker, reserved_tokens, arrival_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")) {
            ps.setString(1, s.requestId());
            if (s.holder() == null) ps.setNull(2, Types.VARCHAR);
            else ps.setString(2, s.holder().keyId());
            ps.setString(3, s.holder() == null ? ANONYMOUS : s.holder().tenant());
            ps.setString(4, s.model());
            ps.setString(5, s.bodySha256());
            ps.setString(6, OPEN);
            ps.setString(7, trackerId);
            ps.setLong(8, s.reservedTokens());
            ps.setLong(9, s.arrival().toEpochMilli());
            ps.executeUpdate();
        }
    }

    /** The budget guard: true when the tokens were held, false when they do not fit or the key is revoked. */
    private static boolean holdBudget(Connection c, String keyId, long tokens) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("UPDATE api_keys SET reserved_tokens = reserved_tokens + ? "
                + "WHERE key_id = ? AND revoked_ms IS NULL "
                + "AND (budget_tokens IS NULL OR budget_tokens - spent_tokens - reserved_tokens >= ?)")) {
            ps.setLong(1, tokens);
            ps.setString(2, keyId);
            ps.setLong(3, tokens);
            return ps.executeUpdate() == 1;
        }
    }

    private static String refusal(Connection c, String keyId, long asked) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT budget_tokens, spent_tokens, reserved_tokens, revoked_ms "
                + "FROM api_keys WHERE key_id = ?")) {
            ps.setString(1, keyId);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) return "The API key no longer exists.";
                long budget = rs.getLong(1);
                long spent = rs.getLong(2);
                long reserved = rs.getLong(3);
                rs.getLong(4);
                if (!rs.wasNull()) return "The API key was revoked.";
                long left = Math.max(0, budget - spent - reserved);
                return "This request may use up to " + asked + " tokens (prompt + max_tokens), but the API key has "
                        + left + " of its " + budget + "-token budget left (" + spent + " spent, " + reserved
                        + " held by requests in flight). Lower max_tokens or raise the key's budget.";
            }
        }
    }

    private boolean rowExists(String requestId) {
        return Transactions.<Boolean, RuntimeException>read(db, c -> {
            try (PreparedStatement ps = c.prepareStatement("SELECT 1 FROM requests WHERE request_id = ?")) {
                ps.setString(1, requestId);
                try (ResultSet rs = ps.executeQuery()) {
                    return rs.next();
                }
            }
        });
    }

    /**
     * Kept in memory and written with the settlement: a time, not a count, so it needs no commit of its own
     * (one fewer synced write per request); an orphan settled after a crash has none.
     */
    @Override
    public void firstToken(String requestId, Instant at) {
        firstTokens.putIfAbsent(requestId, at);
    }

    @Override
    public void settle(Settlement s) {
        Transactions.<Void, RuntimeException>inTransaction(db, c -> {
            try (PreparedStatement ps = c.prepareStatement("UPDATE requests SET state = ?, recipe_id = ?, nodes = ?, "
                    + "prompt_tokens = ?, cached_tokens = ?, generated_tokens = ?, delivered_tokens = ?, "
                    + "recomputed_tokens = ?, outcome = ?, http_status = ?, result_json = ?, end_ms = ?, "
                    + "first_token_ms = ? WHERE request_id = ? AND state = ?")) {
                ps.setString(1, SETTLED);
                ps.setString(2, s.recipeId());
                ps.setString(3, s.nodes() == null ? null : String.join(",", s.nodes()));
                ps.setLong(4, s.promptTokens());
                ps.setLong(5, s.cachedTokens());
                ps.setLong(6, s.generatedTokens());
                ps.setLong(7, s.deliveredTokens());
                ps.setLong(8, s.recomputedTokens());
                ps.setString(9, s.outcome().name());
                ps.setInt(10, s.httpStatus());
                ps.setString(11, s.resultJson());
                ps.setLong(12, s.end().toEpochMilli());
                Instant first = firstTokens.remove(s.requestId());
                if (first == null) ps.setNull(13, Types.BIGINT);
                else ps.setLong(13, first.toEpochMilli());
                ps.setString(14, s.requestId());
                ps.setString(15, OPEN);
                if (ps.executeUpdate() == 0) return null;   // unknown or settled already: nothing to move
            }
            String keyId;
            long reserved;
            try (PreparedStatement ps = c.prepareStatement(
                    "SELECT key_id, reserved_tokens FROM requests WHERE request_id = ?")) {
                ps.setString(1, s.requestId());
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    keyId = rs.getString(1);
                    reserved = rs.getLong(2);
                }
            }
            if (keyId != null) {
                try (PreparedStatement ps = c.prepareStatement("UPDATE api_keys SET reserved_tokens = reserved_tokens - ?, "
                        + "spent_tokens = spent_tokens + ? WHERE key_id = ?")) {
                    ps.setLong(1, reserved);
                    ps.setLong(2, s.promptTokens() + s.generatedTokens());
                    ps.setString(3, keyId);
                    ps.executeUpdate();
                }
            }
            return null;
        });
    }

    /** This tracker's open reservations, oldest first: what a restart must settle. */
    public List<OpenRequest> openRequests() {
        return Transactions.<List<OpenRequest>, RuntimeException>read(db, c -> {
            List<OpenRequest> open = new ArrayList<>();
            try (PreparedStatement ps = c.prepareStatement("SELECT request_id, tenant, model, reserved_tokens, arrival_ms "
                    + "FROM requests WHERE state = ? AND tracker = ? ORDER BY arrival_ms, request_id")) {
                ps.setString(1, OPEN);
                ps.setString(2, trackerId);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        open.add(new OpenRequest(rs.getString(1), rs.getString(2), rs.getString(3), rs.getLong(4),
                                Instant.ofEpochMilli(rs.getLong(5))));
                    }
                }
            }
            return open;
        });
    }

    @Override
    public Optional<LedgerReports.Usage> usage(String tenant, Instant from, Instant to) {
        return Optional.of(new LedgerReports(db).usage(tenant, from, to));
    }

    @Override
    public void close() { db.close(); }
}
