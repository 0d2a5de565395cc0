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
 * re-processed prompt is {@code recomputed} (recorded, not billed).
 *
 * <p>A request no node reports is settled FAILED at zero tokens once nothing can tell more of it: when every
 * node asked answered (nodes keep their accounting in a journal across their own restarts, and this tracker's
 * {@link NodeRoster} names every node it routed to, so an unknown id never reached a node, or its node lost it),
 * or at the end of the grace period when some node still does not answer (gone for good). Nothing exact is
 * known of it then, and the tracker that saw its tokens died, so nothing is billed: the bill never exceeds what
 * is known.
 */
public final class LedgerRecovery {
    private static final System.Logger LOG = System.getLogger(LedgerRecovery.class.getName());
    private static final int IDS_PER_CALL = 1000;

    /** A node to ask: its base URL ({@code http://host:port}) and the bearer token it accepts. */
    public record NodeEndpoint(String id, String baseUrl, String bearer) {}

    /** What one recovery pass did, and whether every node asked answered it. */
    public record Result(int settledFromNodes, int settledUnknown, int stillOpen, boolean allAnswered) {}

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
        return pass(giveUp, false);
    }

    /**
     * As {@link #pass(boolean)}; with {@code giveUpWhenAllAnswered}, also gives up on what no node reported when
     * every node asked answered (there is at least one).
     */
    public Result pass(boolean giveUp, boolean giveUpWhenAllAnswered) {
        List<JdbcLedger.OpenRequest> orphans = new ArrayList<>();
        for (JdbcLedger.OpenRequest r : ledger.openRequests()) if (r.arrival().isBefore(startedAt)) orphans.add(r);
        if (orphans.isEmpty()) return new Result(0, 0, 0, true);
        Map<String, List<NodeRecord>> reports = new HashMap<>();
        // Every node at once: a slow node must not keep the others' answers waiting (one may die meanwhile,
        // and its accounting with it).
        List<java.util.concurrent.Future<java.util.Optional<List<NodeRecord>>>> answers = new ArrayList<>();
        try (var pool = java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor()) {
            for (NodeEndpoint node : nodes.get()) {
                for (int i = 0; i < orphans.size(); i += IDS_PER_CALL) {
                    List<String> ids = orphans.subList(i, Math.min(orphans.size(), i + IDS_PER_CALL)).stream()
                            .map(JdbcLedger.OpenRequest::requestId).toList();
                    answers.add(pool.submit(() -> client.answer(node.id(), node.baseUrl(), node.bearer(), ids)));
                }
            }
        }
        boolean allAnswered = !answers.isEmpty();
        for (var answer : answers) {
            if (answer.state() != java.util.concurrent.Future.State.SUCCESS || answer.resultNow().isEmpty()) {
                allAnswered = false;   // that node tells nothing now
                continue;
            }
            for (NodeRecord rec : answer.resultNow().get()) {
                reports.computeIfAbsent(rec.requestId(), k -> new ArrayList<>()).add(rec);
            }
        }
        giveUp |= giveUpWhenAllAnswered && allAnswered;
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
        return new Result(fromNodes, unknown, open, allAnswered);
    }

    /**
     * Passes every {@code every} until no orphan is left: what no node reports is given up as soon as every node
     * answers, or once {@code grace} has passed since the tracker started while some node still does not.
     * Returns the totals.
     */
    public Result runUntilSettled(Duration every, Duration grace) throws InterruptedException {
        int nodesSettled = 0, unknown = 0;
        while (true) {
            boolean last = Instant.now().isAfter(startedAt.plus(grace));
            Result r = pass(last, true);
            nodesSettled += r.settledFromNodes();
            unknown += r.settledUnknown();
            if (r.stillOpen() == 0 || last) return new Result(nodesSettled, unknown, r.stillOpen(), r.allAnswered());
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
