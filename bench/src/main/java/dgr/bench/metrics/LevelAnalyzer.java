package dgr.bench.metrics;

import dgr.bench.load.Level;
import dgr.bench.target.IterationSample;
import dgr.bench.target.RequestRecord;
import dgr.bench.target.ServerObservation;
import dgr.bench.target.StallReport;
import dgr.bench.target.TargetInfo;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** Turns one level's requests and server observation into {@link LevelMetrics}. */
public final class LevelAnalyzer {
    private final TargetInfo info;
    private final Slo slo;
    private final Thresholds thresholds;

    public LevelAnalyzer(TargetInfo info, Slo slo, Thresholds thresholds) {
        this.info = info;
        this.slo = slo;
        this.thresholds = thresholds;
    }

    /**
     * @param clientsByTenant   clients each tenant had at this level (its most concurrent sessions)
     * @param explicitTenants   whether tenants were set with {@code --tenants} (share checks apply)
     * @param idleProbeE2elMs   p50 E2EL of probes sent with no load, or null
     */
    public LevelMetrics analyze(Level level, List<RequestRecord> all, ServerObservation server,
                                Map<String, Integer> clientsByTenant, boolean explicitTenants, Double idleProbeE2elMs,
                                Long heapAfterGc, Long rss) {
        List<RequestRecord> load = all.stream().filter(r -> !r.probe()).toList();
        List<RequestRecord> ok = load.stream().filter(RequestRecord::ok).toList();
        long first = load.stream().mapToLong(RequestRecord::startNanos).min().orElse(0);
        long last = load.stream().mapToLong(RequestRecord::endNanos).max().orElse(first);
        double dur = Math.max(1e-9, (last - first) / 1e9);
        long in = ok.stream().mapToLong(r -> Math.max(0, r.promptTokens())).sum();
        long out = ok.stream().mapToLong(RequestRecord::outputTokens).sum();
        Summary ttft = Summary.of(ok.stream().mapToDouble(RequestRecord::ttftMs).toArray());
        Summary tpot = Summary.of(ok.stream().mapToDouble(RequestRecord::tpotMs).toArray());
        Summary itl = Summary.of(ok.stream().flatMapToDouble(r -> java.util.Arrays.stream(r.itlMs())).toArray());
        Summary e2el = Summary.of(ok.stream().mapToDouble(RequestRecord::e2elMs).toArray());
        Double goodput = null;
        if (slo.isSet()) {
            long good = ok.stream().filter(r -> (slo.ttftP95Ms() == null || r.ttftMs() <= slo.ttftP95Ms())
                    && (slo.itlP95Ms() == null || Double.isNaN(r.tpotMs()) || r.tpotMs() <= slo.itlP95Ms())).count();
            goodput = good / dur;
        }
        double perSession = tpot == null || tpot.mean() <= 0 ? 0 : 1000.0 / tpot.mean();

        var batch = new LevelMetrics.Batch(server.source(), server.iterations().isEmpty() ? null : server.iterations().size(),
                server.meanRowsPerIteration(), info.rowLimit() > 0 ? info.rowLimit() : null, server.occupancy(),
                server.prefillRowShare(), server.decodeRowShare(), server.pipelineBubble());
        var memory = new LevelMetrics.Memory(heapAfterGc, rss, server.serverRssBytes(), server.stateBytesInUseMean(),
                server.stateBytesInUseMax(), server.stateBudgetBytes());
        var fairness = fairness(level, load, server.stalls(), clientsByTenant, explicitTenants);
        var probe = probe(all, idleProbeE2elMs);
        List<Check> checks = new ArrayList<>(fairness.checks());
        if (probe != null && slo.ttftP95Ms() != null) {
            checks.add(Check.evaluate("probe_ttft_p95", probe.ttftMs() == null ? Double.NaN : probe.ttftMs().p95(), "<=",
                    slo.ttftP95Ms(), "ms", "p95 TTFT of tiny probe requests sent during the load, against the TTFT target"));
        }
        fairness = new LevelMetrics.Fairness(fairness.jainIndex(), fairness.largestServiceGap(),
                fairness.maxRequestService(), fairness.tenantShares(), fairness.longestDecodeStallIterations(),
                fairness.longestDecodeStallMs(), fairness.longestPrefillWaitIterations(), fairness.longestPrefillWaitMs(),
                checks);
        return new LevelMetrics(level.label(), level.closedLoop() ? "closed" : "open", level.concurrency(), level.rate(),
                ok.size(), load.size() - ok.size(), dur, in, out, ok.size() / dur, goodput, out / dur, (in + out) / dur,
                perSession, ttft, tpot, itl, e2el, server.queueTimeMs(), server.queueTimeNote(), batch, memory,
                consistency(all, server), fairness, probe, ThroughputSpread.of(ok));
    }

    private LevelMetrics.Consistency consistency(List<RequestRecord> all, ServerObservation server) {
        long counted = all.stream().mapToLong(RequestRecord::countedTokens).sum();
        long generated = all.stream().mapToLong(RequestRecord::outputTokens).sum();
        if (!info.kind().equals("in-process")) {
            return new LevelMetrics.Consistency(counted, generated, null, null, true);
        }
        // A session processes its prompt and feeds back every generated token but the last.
        long accounted = all.stream().filter(r -> r.promptTokens() >= 0)
                .mapToLong(r -> r.promptTokens() + Math.max(0, r.outputTokens() - 1)).sum();
        long inIterations = server.iterations().stream().mapToLong(IterationSample::tokens).sum();
        return new LevelMetrics.Consistency(counted, generated, accounted, inIterations,
                counted == generated && accounted == inIterations);
    }

    private LevelMetrics.Fairness fairness(Level level, List<RequestRecord> load, StallReport stalls,
                                           Map<String, Integer> clientsByTenant, boolean explicitTenants) {
        List<Check> checks = new ArrayList<>();
        // Per-session service rate once decoding, so queueing (an admission matter, covered by the
        // tenant checks) does not mask starvation among running sessions. In-process it is counted in
        // iterations (rows received ÷ iterations decodable), immune to other processes' noise; over
        // HTTP it is tokens per second between the first and the last token.
        double[] rates;
        String how;
        if (stalls != null) {
            rates = stalls.decodeServiceRates();
            how = "decode rows received ÷ iterations decodable, per session";
        } else {
            rates = load.stream().filter(r -> r.ok() && r.tokenNanos().length > 1)
                    .mapToDouble(r -> (r.outputTokens() - 1) / ((r.endNanos() - r.firstTokenNanos()) / 1e9))
                    .filter(x -> Double.isFinite(x) && x > 0).toArray();
            how = "(output tokens - 1) / (last token - first token) in tokens/s, per session (wall clock)";
        }
        Double jain = rates.length < 2 ? null : Jain.index(rates);
        if (jain == null) checks.add(Check.skipped("jain_index", "not_applicable", "fewer than two decoding sessions"));
        else checks.add(Check.evaluate("jain_index", jain, ">=", thresholds.minJain(), "",
                "Jain's index over per-session decode service rates: " + how));

        TenantService service = new TenantService(load, info.promptTokenWeight(), info.generatedTokenWeight());
        int rowLimit = info.rowLimit() > 0 ? info.rowLimit() : -1;
        var shares = service.shares(clientsByTenant, rowLimit);
        Double gap = null;
        if (service.tenants().size() < 2) {
            checks.add(Check.skipped("tenant_fair_share", "not_applicable", "one tenant"));
            checks.add(Check.skipped("backlogged_service_gap", "not_applicable", "one tenant"));
        } else {
            if (!explicitTenants) {
                checks.add(Check.skipped("tenant_fair_share", "not_applicable",
                        "every client is its own tenant; closed-loop clients take requests as they finish, so shares follow request counts (use --tenants)"));
            } else if (rowLimit < 0) {
                checks.add(Check.skipped("tenant_fair_share", "unavailable", "the target's batch row limit is unknown"));
            } else {
                double worst = shares.stream().filter(s -> s.fairShare() != null && s.fairShare() > 0)
                        .mapToDouble(s -> s.share() / s.fairShare()).min().orElse(Double.NaN);
                checks.add(Check.evaluate("tenant_fair_share", worst, ">=", thresholds.minFairShareRatio(), "ratio",
                        "smallest (tenant service share ÷ its max-min fair share of " + rowLimit + " rows, demand = its clients)"));
            }
            gap = service.largestBackloggedGap();
            int rows = rowLimit > 0 ? rowLimit : Math.max(1, level.concurrency());
            double bound = (rows + thresholds.serviceGapRequests()) * service.maxRequestService();
            checks.add(Check.evaluate("backlogged_service_gap", gap, "<=", bound, "service units",
                    "largest service difference between two tenants over an interval where both had requests waiting;"
                            + " bound = (" + (rowLimit > 0 ? "row limit " : "concurrency ") + rows + " + "
                            + thresholds.serviceGapRequests() + ") × largest request service " + Math.round(service.maxRequestService())));
        }
        if (stalls == null) {
            checks.add(Check.skipped("decode_stall", "unavailable", "needs the scheduler's iteration events (in-process)"));
            checks.add(Check.skipped("prefill_wait", "unavailable", "needs the scheduler's iteration events (in-process)"));
        } else {
            checks.add(Check.evaluate("decode_stall", stalls.longestDecodeStallIterations(), "<=", info.decodeWaitBound(),
                    "iterations", "longest run of iterations a running decode session had no row; bound = the scheduler's decode wait bound"));
            checks.add(Check.evaluate("prefill_wait", stalls.longestPrefillWaitIterations(), "<=", info.prefillWaitBound(),
                    "iterations", "longest run of iterations an admitted prefill had no chunk; bound = the scheduler's prefill wait bound"));
        }
        return new LevelMetrics.Fairness(jain, gap, service.maxRequestService(), shares,
                stalls == null ? null : stalls.longestDecodeStallIterations(),
                stalls == null ? null : stalls.longestDecodeStallMs(),
                stalls == null ? null : stalls.longestPrefillWaitIterations(),
                stalls == null ? null : stalls.longestPrefillWaitMs(), checks);
    }

    private static LevelMetrics.Probe probe(List<RequestRecord> all, Double idleE2el) {
        List<RequestRecord> probes = all.stream().filter(r -> r.probe() && r.ok()).toList();
        if (probes.isEmpty()) return null;
        Summary ttft = Summary.of(probes.stream().mapToDouble(RequestRecord::ttftMs).toArray());
        Summary e2el = Summary.of(probes.stream().mapToDouble(RequestRecord::e2elMs).toArray());
        Double factor = idleE2el == null || idleE2el <= 0 || e2el == null ? null : e2el.p50() / idleE2el;
        return new LevelMetrics.Probe(probes.size(), ttft, e2el, factor);
    }
}
