package dgr.tracker.ledger;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The dgr nodes one tracker has routed to, kept in the ledger's database ({@code ledger_nodes}) so that a
 * tracker restarted after a kill -9 knows whom to ask for its open rows, including nodes that have not joined
 * it again yet (because they are restarting too). Written only when a node appears or changes its URL, and
 * refreshed every {@link #REFRESH}, never per request.
 */
public final class NodeRoster {
    /** How often a known node's last-seen time is written again. */
    static final Duration REFRESH = Duration.ofMinutes(1);

    /** A node as remembered: its id and base URL ({@code http://host:port}). */
    public record Entry(String nodeId, String url, Instant lastSeen) {}

    private final LedgerDatabase db;
    private final String trackerId;
    private final Map<String, Entry> written = new ConcurrentHashMap<>();

    NodeRoster(LedgerDatabase db, String trackerId) {
        this.db = db;
        this.trackerId = trackerId;
    }

    /** Notes that node {@code nodeId} serves at {@code url} now: a write only when new, moved or stale. */
    public void seen(String nodeId, String url, Instant now) {
        Entry before = written.get(nodeId);
        if (before != null && before.url().equals(url) && before.lastSeen().plus(REFRESH).isAfter(now)) return;
        Transactions.<Void, RuntimeException>inTransaction(db, c -> {
            try (PreparedStatement up = c.prepareStatement(
                    "UPDATE ledger_nodes SET url = ?, last_seen_ms = ? WHERE tracker = ? AND node_id = ?")) {
                up.setString(1, url);
                up.setLong(2, now.toEpochMilli());
                up.setString(3, trackerId);
                up.setString(4, nodeId);
                if (up.executeUpdate() == 1) return null;
            }
            try (PreparedStatement in = c.prepareStatement(
                    "INSERT INTO ledger_nodes (tracker, node_id, url, last_seen_ms) VALUES (?, ?, ?, ?)")) {
                in.setString(1, trackerId);
                in.setString(2, nodeId);
                in.setString(3, url);
                in.setLong(4, now.toEpochMilli());
                in.executeUpdate();
            }
            return null;
        });
        written.put(nodeId, new Entry(nodeId, url, now));
    }

    /** The nodes this tracker saw at or after {@code since}, by id. */
    public List<Entry> seenSince(Instant since) {
        return Transactions.<List<Entry>, RuntimeException>read(db, c -> {
            List<Entry> out = new ArrayList<>();
            try (PreparedStatement ps = c.prepareStatement("SELECT node_id, url, last_seen_ms FROM ledger_nodes "
                    + "WHERE tracker = ? AND last_seen_ms >= ? ORDER BY node_id")) {
                ps.setString(1, trackerId);
                ps.setLong(2, since.toEpochMilli());
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) out.add(new Entry(rs.getString(1), rs.getString(2), Instant.ofEpochMilli(rs.getLong(3))));
                }
            }
            return out;
        });
    }
}
