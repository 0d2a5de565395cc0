package dgr.tracker.ledger;

import dgr.tracker.ledger.NodeAccountingClient.NodeRecord;
import dgr.tracker.ledger.Settlement.Outcome;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * Settles the reservations a tracker left open when it died (kill -9 with streams in flight) from the
 * nodes' own accounting ({@code POST /v1/accounting}, node token).
 *
 * <p>Only this tracker's rows that arrived before it started are orphans. Each round asks every known node
 * for them; a request some node reports finished is settled at what the nodes computed. When several nodes
 * report one id (a stream resumed on another node), the last to start holds the request's usage (a node
 * reports a resumed session's own prompt, and the resumed tokens as generated), and every node's
 * re-processed prompt is {@code recomputed} (recorded, not billed). A request no node has reported by the end of the grace period (its node died too, or it never
 * reached one) is settled FAILED at zero tokens: nothing exact is known of it, so nothing is billed.
 */
public final class LedgerRecovery {
    private static final System.Logger LOG = System.getLogger(LedgerRecovery.class.getName());
    private static final int IDS_PER_CALL = 1000;

    /** A node to ask: its base URL ({@code http://host:port}) and the bearer token it accepts. */
    public record NodeEndpoint(String id, String baseUrl, String bearer) {}

    /** What one recovery pass did. */
    public record Result(int settledFromNodes, int settledUnknown, int stillOpen) {}

    private final JdbcLedger ledger;
    private final Supplier<List<NodeEndpoint>> nodes;
    private final Instant startedAt;
    private final NodeAccountingClient client = new NodeAccountingClient();

    /** @param startedAt when this tracker process started: rows that arrived before it are orphans */
    public LedgerRecovery(JdbcLedger ledger, Supplier<List<NodeEndpoint>> nodes, Instant startedAt) {
        this.ledger = ledger;
        this.nodes = nodes;
        this.startedAt = startedAt;
    }

    /**
     * Asks the nodes and settles what they report finished; with {@code giveUp}, also settles what no node
     * reported as FAILED at zero tokens.
     */
    public Result pass(boolean giveUp) {
        List<JdbcLedger.OpenRequest> orphans = new ArrayList<>();
        for (JdbcLedger.OpenRequest r : ledger.openRequests()) if (r.arrival().isBefore(startedAt)) orphans.add(r);
        if (orphans.isEmpty()) return new Result(0, 0, 0);
        Map<String, List<NodeRecord>> reports = new HashMap<>();
        // Every node at once: a slow node must not keep the others' answers waiting (one may die meanwhile,
        // and its accounting with it).
        List<java.util.concurrent.Future<List<NodeRecord>>> answers = new ArrayList<>();
        try (var pool = java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor()) {
            for (NodeEndpoint node : nodes.get()) {
                for (int i = 0; i < orphans.size(); i += IDS_PER_CALL) {
                    List<String> ids = orphans.subList(i, Math.min(orphans.size(), i + IDS_PER_CALL)).stream()
                            .map(JdbcLedger.OpenRequest::requestId).toList();
                    answers.add(pool.submit(() -> client.ask(node.id(), node.baseUrl(), node.bearer(), ids)));
                }
            }
        }
        for (var answer : answers) {
            if (answer.state() != java.util.concurrent.Future.State.SUCCESS) continue;   // that node tells nothing now
            for (NodeRecord rec : answer.resultNow()) reports.computeIfAbsent(rec.requestId(), k -> new ArrayList<>()).add(rec);
        }
        int fromNodes = 0, unknown = 0, open = 0;
        for (JdbcLedger.OpenRequest r : orphans) {
            List<NodeRecord> recs = reports.getOrDefault(r.requestId(), List.of());
            if (!recs.isEmpty() && recs.stream().allMatch(NodeRecord::finished)) {
                ledger.settle(settlement(r.requestId(), recs));
                fromNodes++;
            } else if (recs.isEmpty() && giveUp) {
                ledger.settle(new Settlement(r.requestId(), null, List.of(), 0, 0, 0, 0, 0, Outcome.FAILED, 502, null,
                        Instant.now()));
                unknown++;
            } else {
                open++;
            }
        }
        if (fromNodes + unknown > 0) {
            LOG.log(System.Logger.Level.INFO, "ledger recovery: settled " + fromNodes + " open requests from the nodes' "
                    + "accounting, " + unknown + " that no node knew; " + open + " still open");
        }
        return new Result(fromNodes, unknown, open);
    }

    /**
     * Passes every {@code every} until no orphan is left or {@code grace} has passed since the tracker
     * started, then a last pass that gives up on the rest. Returns the totals.
     */
    public Result runUntilSettled(Duration every, Duration grace) throws InterruptedException {
        int nodesSettled = 0, unknown = 0;
        while (true) {
            boolean last = Instant.now().isAfter(startedAt.plus(grace));
            Result r = pass(last);
            nodesSettled += r.settledFromNodes();
            unknown += r.settledUnknown();
            if (r.stillOpen() == 0 || last) return new Result(nodesSettled, unknown, r.stillOpen());
            Thread.sleep(every.toMillis());
        }
    }

    static Settlement settlement(String requestId, List<NodeRecord> recs) {
        List<NodeRecord> byStart = new ArrayList<>(recs);
        byStart.sort(Comparator.comparingLong(NodeRecord::startedMs));
        // The last node to serve the request holds its usage as the client would have seen it; every node's
        // re-processed prompt is recomputation.
        NodeRecord last = byStart.getLast();
        long recomputed = 0;
        for (NodeRecord r : byStart) recomputed += r.recomputedTokens();
        Outcome outcome = switch (last.finishReason()) {
            case "stop" -> Outcome.STOP;
            case "length" -> Outcome.LENGTH;
            // The node's client was this tracker, which died: the stream was cut, billed at what was computed.
            case "cancelled" -> Outcome.CUT;
            default -> Outcome.FAILED;
        };
        return new Settlement(requestId, null, byStart.stream().map(NodeRecord::node).toList(), last.promptTokens(),
                last.cachedTokens(), last.generatedTokens(), last.deliveredTokens(), recomputed, outcome, 200, null,
                Instant.ofEpochMilli(last.endedMs()));
    }
}
