package dgr.tracker.ledger;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;

/**
 * The tracker's API keys: created with a tenant and an optional token budget, listed, revoked, and
 * checked on every request.
 *
 * <p>A key reads {@code dgr-ID-SECRET}: ID (12 hex digits) names its row, SECRET is 32 random bytes.
 * The database holds only the SHA-256 of the whole key — a key with 256 random bits needs no slow
 * hash — and a presented key is checked by hashing it and comparing the digests with
 * {@link MessageDigest#isEqual} (constant time). Every check reads the row, so a revoked key is refused
 * from the commit of its revocation on, by every tracker sharing the database.
 */
public final class ApiKeyStore {
    private static final String PREFIX = "dgr-";
    private static final int ID_HEX = 12;
    private static final SecureRandom RANDOM = new SecureRandom();

    /** A key as {@code keys list} shows it: never the key, only its id. */
    public record KeyInfo(String keyId, String tenant, Long budgetTokens, long spentTokens, long reservedTokens,
                          Instant created, Instant revoked) {
        public boolean isRevoked() { return revoked != null; }
    }

    /** A key just made: the only moment the key itself exists outside its holder's hands. */
    public record NewKey(String keyId, String tenant, Long budgetTokens, String key) {}

    private final LedgerDatabase db;
    private final Clock clock;

    public ApiKeyStore(LedgerDatabase db, Clock clock) {
        this.db = db;
        this.clock = clock;
    }

    /** Creates a key for a tenant; {@code budgetTokens} null means unbudgeted. */
    public NewKey add(String tenant, Long budgetTokens) {
        if (tenant == null || tenant.isBlank()) throw new IllegalArgumentException("--tenant must not be blank");
        if (tenant.length() > 200) throw new IllegalArgumentException("--tenant must be at most 200 characters");
        if (budgetTokens != null && budgetTokens < 0) {
            throw new IllegalArgumentException("--budget-tokens must be >= 0, got " + budgetTokens);
        }
        byte[] id = new byte[ID_HEX / 2];
        byte[] secret = new byte[32];
        RANDOM.nextBytes(id);
        RANDOM.nextBytes(secret);
        String keyId = HexFormat.of().formatHex(id);
        String key = PREFIX + keyId + "-" + Base64.getUrlEncoder().withoutPadding().encodeToString(secret);
        Transactions.<Void, RuntimeException>inTransaction(db, c -> {
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO api_keys (key_id, key_sha256, tenant, "
                    + "budget_tokens, reserved_tokens, spent_tokens, created_ms) VALUES (?, ?, ?, ?, 0, 0, ?)")) {
                ps.setString(1, keyId);
                ps.setString(2, sha256Hex(key));
                ps.setString(3, tenant);
                if (budgetTokens == null) ps.setNull(4, java.sql.Types.BIGINT);
                else ps.setLong(4, budgetTokens);
                ps.setLong(5, clock.millis());
                ps.executeUpdate();
            }
            return null;
        });
        return new NewKey(keyId, tenant, budgetTokens, key);
    }

    /** Every key, oldest first. */
    public List<KeyInfo> list() {
        return Transactions.<List<KeyInfo>, RuntimeException>read(db, c -> {
            List<KeyInfo> keys = new ArrayList<>();
            try (PreparedStatement ps = c.prepareStatement("SELECT key_id, tenant, budget_tokens, spent_tokens, "
                    + "reserved_tokens, created_ms, revoked_ms FROM api_keys ORDER BY created_ms, key_id");
                 ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    long budget = rs.getLong(3);
                    Long budgetOrNull = rs.wasNull() ? null : budget;
                    long revokedMs = rs.getLong(7);
                    Instant revoked = rs.wasNull() ? null : Instant.ofEpochMilli(revokedMs);
                    keys.add(new KeyInfo(rs.getString(1), rs.getString(2), budgetOrNull, rs.getLong(4), rs.getLong(5),
                            Instant.ofEpochMilli(rs.getLong(6)), revoked));
                }
            }
            return keys;
        });
    }

    /**
     * Revokes a key, named by its id or by the key itself; true when it was live until now.
     *
     * @throws IllegalArgumentException when no key has that id
     */
    public boolean revoke(String keyIdOrKey) {
        String keyId = keyIdOf(keyIdOrKey).orElse(keyIdOrKey);
        return Transactions.<Boolean, RuntimeException>inTransaction(db, c -> {
            try (PreparedStatement ps = c.prepareStatement(
                    "UPDATE api_keys SET revoked_ms = ? WHERE key_id = ? AND revoked_ms IS NULL")) {
                ps.setLong(1, clock.millis());
                ps.setString(2, keyId);
                if (ps.executeUpdate() == 1) return true;
            }
            try (PreparedStatement ps = c.prepareStatement("SELECT 1 FROM api_keys WHERE key_id = ?")) {
                ps.setString(1, keyId);
                try (ResultSet rs = ps.executeQuery()) {
                    if (!rs.next()) throw new IllegalArgumentException("no API key has the id '" + keyId + "'");
                }
            }
            return false;
        });
    }

    /** Whether any key was ever made (revoked ones too: keys are never deleted, so once true, always true). */
    public boolean anyKey() {
        return Transactions.<Boolean, RuntimeException>read(db, c -> {
            try (PreparedStatement ps = c.prepareStatement("SELECT key_id FROM api_keys")) {
                ps.setMaxRows(1);
                try (ResultSet rs = ps.executeQuery()) {
                    return rs.next();
                }
            }
        });
    }

    /** The holder of a live key, or empty for a malformed, unknown or revoked one. */
    public Optional<KeyHolder> authenticate(String presented) {
        Optional<String> keyId = keyIdOf(presented);
        if (keyId.isEmpty()) return Optional.empty();
        byte[] presentedHash = sha256(presented);
        try (Connection c = db.connection();
             PreparedStatement ps = c.prepareStatement(
                     "SELECT key_sha256, tenant, revoked_ms FROM api_keys WHERE key_id = ?")) {
            ps.setString(1, keyId.get());
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) return Optional.empty();
                byte[] stored = HexFormat.of().parseHex(rs.getString(1));
                String tenant = rs.getString(2);
                rs.getLong(3);
                boolean revoked = !rs.wasNull();
                boolean equal = MessageDigest.isEqual(presentedHash, stored);
                return equal && !revoked ? Optional.of(new KeyHolder(keyId.get(), tenant)) : Optional.empty();
            }
        } catch (SQLException e) {
            throw new LedgerException("ledger database error while checking an API key: " + e.getMessage(), e);
        }
    }

    /** The id part of a well-formed key. */
    static Optional<String> keyIdOf(String key) {
        if (key == null || !key.startsWith(PREFIX) || key.length() < PREFIX.length() + ID_HEX + 2) return Optional.empty();
        if (key.charAt(PREFIX.length() + ID_HEX) != '-') return Optional.empty();
        String id = key.substring(PREFIX.length(), PREFIX.length() + ID_HEX);
        for (int i = 0; i < id.length(); i++) {
            if (Character.digit(id.charAt(i), 16) < 0) return Optional.empty();
        }
        return Optional.of(id);
    }

    static byte[] sha256(String s) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }

    static String sha256Hex(String s) { return HexFormat.of().formatHex(sha256(s)); }
}
