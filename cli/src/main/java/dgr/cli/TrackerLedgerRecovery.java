package dgr.cli;

import dgr.tracker.TrackerServer;
import dgr.tracker.ledger.JdbcLedger;
import dgr.tracker.ledger.LedgerRecovery;
import dgr.tracker.ledger.NodeRoster;
import dgr.tracker.registry.Backend;
import dgr.tracker.registry.RegisteredNode;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The ledger's side of a running tracker (docs/tracker.md, "The token ledger"): remembers the dgr nodes it routes
 * to ({@link NodeRoster}, a write when one joins or moves), and after a restart settles the reservations it left
 * open from the accounting of every node it remembers or that joins it: a pass every second until none is left,
 * giving up on those no node knows as soon as every node answers, or after the grace ({@code --recovery-grace},
 * default {@link #GRACE}) while some node still does not.
 */
final class TrackerLedgerRecovery {
    /** Default: long enough for a node killed with the tracker to restart from its journal and answer. */
    static final Duration GRACE = Duration.ofSeconds(30);
    /** Nodes remembered from before the restart that are asked: those seen within this long before it. */
    private static final Duration REMEMBERED = Duration.ofHours(1);

    private TrackerLedgerRecovery() {}

    static void start(TrackerServer server, JdbcLedger ledger, Instant started, Duration grace) {
        NodeRoster roster = ledger.roster();
        List<NodeRoster.Entry> remembered = roster.seenSince(started.minus(REMEMBERED));
        server.tracker().registry().onSighting(s -> {
            if (s.backend() != Backend.DGR) return;
            try {
                roster.seen(s.id(), stripSlash(s.url().toString()), Instant.now());
            } catch (RuntimeException e) {   // the loop below writes it again within a second
                System.err.println("dgr tracker: could not remember node " + s.id() + " in the ledger: " + e.getMessage());
            }
        });
        Thread.ofVirtual().name("dgr-ledger-roster").start(() -> remember(server, roster));
        if (ledger.openRequests().stream().noneMatch(r -> r.arrival().isBefore(started))) return;
        String token = server.tracker().config().nodeToken();
        LedgerRecovery recovery = new LedgerRecovery(ledger, () -> {
            Map<String, LedgerRecovery.NodeEndpoint> nodes = new LinkedHashMap<>();
            for (NodeRoster.Entry e : remembered) nodes.put(e.nodeId(), new LedgerRecovery.NodeEndpoint(e.nodeId(), e.url(), token));
            for (RegisteredNode n : dgrNodes(server)) {   // a node that joined again is asked where it is now
                nodes.put(n.id(), new LedgerRecovery.NodeEndpoint(n.id(), stripSlash(n.url().toString()), n.bearer()));
            }
            return new ArrayList<>(nodes.values());
        }, started);
        Thread.ofVirtual().name("dgr-ledger-recovery").start(() -> {
            try {
                LedgerRecovery.Result r = recovery.runUntilSettled(Duration.ofSeconds(1), grace);
                System.err.println("dgr tracker: ledger recovery settled " + r.settledFromNodes() + " open requests from"
                        + " the nodes' accounting and " + r.settledUnknown() + " that no node knew (billed 0)"
                        + (r.allAnswered() ? "" : "; some node did not answer within " + grace));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (RuntimeException e) {
                System.err.println("dgr tracker: ledger recovery failed: " + e.getMessage());
            }
        });
    }

    /**
     * Every second, notes the dgr nodes in the registry (a database write only for a new or moved node, or one
     * not written for {@link NodeRoster}'s refresh period); a join is written at once ({@code onSighting}).
     */
    private static void remember(TrackerServer server, NodeRoster roster) {
        while (true) {
            try {
                for (RegisteredNode n : dgrNodes(server)) roster.seen(n.id(), stripSlash(n.url().toString()), Instant.now());
                Thread.sleep(1000);
            } catch (InterruptedException e) {
                return;
            } catch (RuntimeException e) {
                System.err.println("dgr tracker: could not remember the nodes in the ledger: " + e.getMessage());
                try {
                    Thread.sleep(5000);
                } catch (InterruptedException stop) {
                    return;
                }
            }
        }
    }

    /** Only dgr nodes keep accounting by request id. */
    private static List<RegisteredNode> dgrNodes(TrackerServer server) {
        List<RegisteredNode> out = new ArrayList<>();
        for (RegisteredNode n : server.tracker().registry().all()) if (n.backend() == Backend.DGR) out.add(n);
        return out;
    }

    private static String stripSlash(String url) { return url.endsWith("/") ? url.substring(0, url.length() - 1) : url; }
}
