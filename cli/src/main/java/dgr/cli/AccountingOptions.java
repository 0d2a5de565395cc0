package dgr.cli;

import dgr.node.accounting.RecentRequests;
import dgr.tracker.ledger.LedgerDatabase;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Clock;
import picocli.CommandLine.Option;

/**
 * {@code --accounting-file PATH}: where {@code dgr serve} keeps its accounting of the tracker's requests, so that
 * it outlives a kill -9 of the node (docs/tracker.md, "The token ledger").
 */
final class AccountingOptions {
    @Option(names = "--accounting-file", description = "journal of the tracker's finished requests (forced to disk before"
            + " each final chunk, reloaded on restart, served at POST /v1/accounting); default with --node-token and a fixed"
            + " --port: node-accounting-PORT.jsonl under the user's data directory; 'none': kept in memory only")
    String file;

    /** The node's accounting: in the journal chosen by the flags, or in memory; says which on {@code err}. */
    RecentRequests open(String nodeToken, int port, PrintStream err) throws IOException {
        Path path = path(nodeToken, port);
        if (path == null) return new RecentRequests(RecentRequests.DEFAULT_CAPACITY, Clock.systemUTC());
        RecentRequests r = RecentRequests.durable(path, RecentRequests.DEFAULT_CAPACITY, Clock.systemUTC());
        err.println("dgr serve: accounting journal at " + path + " (" + r.finishedCount() + " finished requests reloaded)");
        return r;
    }

    private Path path(String nodeToken, int port) {
        if ("none".equals(file)) return null;
        if (file != null) return Path.of(file);
        // Only a tracker's requests are kept, and a restarted node finds its journal again by its port.
        if (nodeToken == null || port == 0) return null;
        return LedgerDatabase.defaultSqliteFile().resolveSibling("node-accounting-" + port + ".jsonl");
    }
}
