package dgr.cli;

import dgr.tracker.TrackerConfig;
import dgr.tracker.TrackerServer;
import dgr.tracker.ledger.ApiKeyStore;
import dgr.tracker.ledger.JdbcLedger;
import dgr.tracker.ledger.LedgerDatabase;
import java.time.Clock;
import java.time.Instant;
import dgr.tracker.routing.RoutingPolicy;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code dgr tracker}: one OpenAI-compatible endpoint in front of many nodes (docs/tracker.md). Run
 * bare, it serves; its subcommands (added beside it) work on the tracker's ledger.
 */
@Command(name = "tracker", mixinStandardHelpOptions = true,
        subcommands = {TrackerKeysCommand.class, TrackerUsageCommand.class},
        description = "Run a tracker: one OpenAI-compatible endpoint (/v1/completions, /v1/chat/completions,"
                + " /v1/models, /health, /metrics) routing to the nodes that join it by measured headroom,"
                + " relaying their streams and resuming them when a node dies. Nodes join with"
                + " 'dgr serve --tracker http://HOST:PORT --node-token T'; operators see them at GET /v1/nodes.")
public final class TrackerCommand implements Callable<Integer> {
    @Option(names = "--host", defaultValue = "127.0.0.1", description = "address to bind (default: ${DEFAULT-VALUE})")
    String host;

    @Option(names = "--port", defaultValue = "8000", description = "port to bind; 0 picks a free one (default: ${DEFAULT-VALUE})")
    int port;

    @Option(names = "--node-token", description = "token nodes must present to join (dgr serve --node-token);"
            + " without it no node can join")
    String nodeToken;

    @Option(names = "--admin-token", description = "bearer token of the admin API (GET/POST /v1/nodes);"
            + " without it the admin API answers 401")
    String adminToken;

    @Option(names = "--routing", defaultValue = "capacity", description = "how to pick a node: "
            + RoutingPolicy.FLAG_VALUES + " (default: ${DEFAULT-VALUE})")
    String routing;

    @Option(names = "--queue-wait", description = "longest a request waits for headroom before HTTP 429, e.g. 10s, 500ms (default: 10s)")
    String queueWait;

    @Option(names = "--max-queued", description = "most requests waiting for headroom at once; beyond it HTTP 429 at once (default: 256)")
    Integer maxQueued;

    @Option(names = "--tracker-id", description = "this tracker's name in the ledger rows it opens, stable across its"
            + " restarts and distinct between trackers sharing a database (default: tracker@HOST:PORT)")
    String trackerId;

    @Option(names = "--recovery-grace", description = "after a restart, how long open ledger rows wait for a node's"
            + " accounting before those no node knows are settled as failed at 0 tokens, e.g. 30s, 5m (default: 30s)")
    String recoveryGrace;

    @Mixin
    LedgerOptions ledgerOptions;

    @Override
    public Integer call() throws Exception {
        TrackerConfig config = config();
        Instant started = Instant.now();
        JdbcLedger ledger = ledger();
        TrackerServer tracker = TrackerServer.start(config, ledger);
        TrackerLedgerRecovery.start(tracker, ledger, started, recoveryGrace == null ? TrackerLedgerRecovery.GRACE
                : DurationFlag.parse("--recovery-grace", recoveryGrace));
        System.err.println("dgr tracker: listening on http://" + tracker.host() + ":" + tracker.port() + " (routing "
                + config.routing().flag() + (config.nodeToken() == null ? "; no --node-token: no node can join" : "")
                + ")");
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            tracker.close();
            stopped.countDown();
        }, "dgr-tracker-shutdown"));
        stopped.await();
        return 0;
    }

    TrackerConfig config() {
        TrackerConfig c = TrackerConfig.defaults().withAddress(host, port).withTokens(nodeToken, adminToken)
                .withRouting(RoutingPolicy.ofFlag(routing));
        if (queueWait != null || maxQueued != null) {
            c = c.withQueue(queueWait == null ? c.maxQueueWait() : duration(queueWait, "--queue-wait"),
                    maxQueued == null ? c.maxQueuedRequests() : maxQueued);
        }
        return c;
    }

    private static java.time.Duration duration(String value, String flag) {
        return DurationFlag.parse(flag, value);
    }

    /** The durable ledger: --db, else the default SQLite file (the tracker says which on stderr). */
    JdbcLedger ledger() {
        LedgerDatabase db = ledgerOptions.open(System.err, "dgr tracker");
        return new JdbcLedger(db, new ApiKeyStore(db, Clock.systemUTC()),
                trackerId != null ? trackerId : "tracker@" + host + ":" + port);
    }
}
