package dgr.cli;

import dgr.tracker.TrackerServer;
import dgr.tracker.registry.Backend;
import dgr.tracker.ledger.JdbcLedger;
import dgr.tracker.ledger.LedgerRecovery;
import dgr.tracker.registry.RegisteredNode;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * After a restart, settles the reservations this tracker left open from the accounting of the nodes that
 * join it again (docs/tracker.md, "The token ledger"): a pass every second until none is left, giving up
 * after {@link #GRACE} on those no node knows.
 */
final class TrackerLedgerRecovery {
    /** Long enough for every surviving node to heartbeat back in and finish the streams it had. */
    static final Duration GRACE = Duration.ofSeconds(30);

    private TrackerLedgerRecovery() {}

    static void start(TrackerServer server, JdbcLedger ledger, Instant started) {
        if (ledger.openRequests().stream().noneMatch(r -> r.arrival().isBefore(started))) return;
        LedgerRecovery recovery = new LedgerRecovery(ledger, () -> {
            List<LedgerRecovery.NodeEndpoint> nodes = new ArrayList<>();
            for (RegisteredNode n : server.tracker().registry().all()) {
                if (n.backend() != Backend.DGR) continue;   // only dgr nodes keep accounting by request id
                nodes.add(new LedgerRecovery.NodeEndpoint(n.id(), stripSlash(n.url().toString()), n.bearer()));
            }
            return nodes;
        }, started);
        Thread.ofVirtual().name("dgr-ledger-recovery").start(() -> {
            try {
                LedgerRecovery.Result r = recovery.runUntilSettled(Duration.ofSeconds(1), GRACE);
                System.err.println("dgr tracker: ledger recovery settled " + r.settledFromNodes() + " open requests from"
                        + " the nodes' accounting and " + r.settledUnknown() + " that no node knew (billed 0)");
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (RuntimeException e) {
                System.err.println("dgr tracker: ledger recovery failed: " + e.getMessage());
            }
        });
    }

    private static String stripSlash(String url) { return url.endsWith("/") ? url.substring(0, url.length() - 1) : url; }
}
