package dgr.bench.report;

import dgr.bench.metrics.Check;
import dgr.bench.metrics.LevelMetrics;
import dgr.bench.metrics.Summary;
import dgr.bench.saturation.Recommendation;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** Writes report.md and report.html (with PNG plots) for a run. */
public final class ReportWriter {

    public void write(BenchResult r, Path dir) {
        Doc d = new Doc();
        Environment e = r.environment();
        d.h(1, "dgr bench report");
        for (RunResult run : r.runs()) Summary3.lines(run, dir).forEach(d::p);
        d.p("Command: `" + e.commandLine() + "`");
        d.p("Measured " + e.startedAt() + " on " + e.hostname() + ": " + e.cpuModel() + ", " + e.cores() + " cores, "
                + (e.memoryBytes() == null ? "memory unknown" : gib(e.memoryBytes()) + " memory") + ", " + e.os() + ", "
                + e.jvm() + ", dgr " + e.dgrVersion() + ".");
        if (e.kernelMemory() != null) d.p("Kernels: " + e.kernelMemory() + ".");
        d.h(2, "Lanes");
        List<List<String>> lanes = new ArrayList<>();
        for (LaneStatus l : r.lanes()) lanes.add(List.of(l.lane(), l.status(), l.reason()));
        d.table(List.of("lane", "status", "detail"), lanes);
        long failed = r.failedChecks();
        d.p(failed == 0 ? "**All fairness and starvation checks passed** (or did not apply)."
                : "**" + failed + " fairness/starvation check(s) FAILED**; the command exits non-zero.");

        int n = 0;
        for (RunResult run : r.runs()) {
            String prefix = r.runs().size() == 1 ? "" : "run" + (n++) + "-";
            var t = run.target();
            d.h(2, "Recipe `" + t.recipeId() + "` (" + t.lane() + " lane): " + t.modelName());
            d.p("Target: " + t.kind() + " `" + t.endpoint() + "`; architecture " + or(t.architecture()) + ", engine "
                    + or(t.engine()) + ", artifact sha256 `" + or(t.artifactSha256()) + "`, row limit "
                    + (t.rowLimit() > 0 ? t.rowLimit() : "unknown") + ", fairness counters "
                    + (t.fairness() == null ? "unknown" : t.fairness() ? "on" : "off") + ".");
            recommendation(d, run.recommendation());
            if (run.sweepEnd() != null) d.p("Sweep: ended: " + run.sweepEnd() + ".");
            throughputTable(d, run.levels());
            latencyTable(d, run.levels());
            batchTable(d, run.levels());
            checksTable(d, run.levels());
            tenantTable(d, run.levels());
            servedByTable(d, run.requests());
            d.h(3, "Plots");
            for (String[] plot : Plots.write(run, prefix, dir)) d.image(plot[0], plot[1]);
        }
        d.h(2, "Definitions");
        d.p("Throughputs are over each level's duration (first request sent to last ended); `ttft_ms`, `tpot_ms` "
                + "((e2el - ttft) / (output tokens - 1)), `itl_ms` (every gap between streamed tokens) and `e2el_ms` follow vLLM's "
                + "benchmark. `request_goodput` counts requests whose TTFT and TPOT meet the SLO. Occupancy is mean sessions per "
                + "iteration ÷ the batch row limit. The knee rule, the checks and their thresholds are described in docs/bench.md.");
        try {
            Files.writeString(dir.resolve("report.md"), d.markdown());
            Files.writeString(dir.resolve("report.html"), d.html("dgr bench report", dir));
        } catch (IOException ex) {
            throw new UncheckedIOException("cannot write report in " + dir, ex);
        }
    }

    private static void recommendation(Doc d, Recommendation rec) {
        if (rec == null) {
            d.p("No closed-loop levels: no saturation recommendation.");
            return;
        }
        d.h(3, "Saturation recommendation");
        d.table(List.of("field", "value"), List.of(
                List.of("concurrency_tested", rec.concurrencyTested().toString()),
                List.of("knee_status", rec.kneeStatus() + " (" + rec.kneeRule().reason() + ")"),
                List.of("knee_concurrency", or(rec.kneeConcurrency())),
                List.of("max_concurrency_meeting_slo", or(rec.maxConcurrencyMeetingSlo()) + " (SLO: TTFT p95 ≤ "
                        + or(rec.slo().ttftP95Ms()) + " ms, ITL p95 ≤ " + or(rec.slo().itlP95Ms()) + " ms)"),
                List.of("recommended_max_concurrency", rec.recommendedMaxConcurrency() + " (" + rec.recommendationBasis() + ")"),
                List.of("expected_output_throughput", f(rec.expectedOutputThroughput()) + " tok/s (interpolated between tested levels)"),
                List.of("expected per-session output", f(rec.expectedPerSessionOutputThroughput()) + " tok/s"),
                List.of("state_bytes_per_token", or(rec.stateBytesPerToken())
                        + (rec.stateBytesPerTokenBasis() == null ? "" : " (" + rec.stateBytesPerTokenBasis() + ")")),
                List.of("sessions fitting the state budget", or(rec.sessionsFittingStateBudget()) + " (budget "
                        + or(rec.stateBudgetBytes()) + " bytes)")));
    }

    private static void throughputTable(Doc d, List<LevelMetrics> ls) {
        d.h(3, "Throughput");
        List<List<String>> rows = new ArrayList<>();
        for (LevelMetrics m : ls) {
            rows.add(List.of(m.label(), Integer.toString(m.completed()), Integer.toString(m.failed()), f(m.durationS()),
                    f(m.requestThroughput()), m.requestGoodput() == null ? "n/a" : f(m.requestGoodput()),
                    f(m.outputThroughput()), f(m.totalTokenThroughput()), f(m.perSessionOutputThroughput())));
        }
        d.table(List.of("level", "completed", "failed", "duration_s", "request_throughput", "request_goodput",
                "output_throughput", "total_token_throughput", "per-session tok/s"), rows);
    }

    private static void latencyTable(Doc d, List<LevelMetrics> ls) {
        d.h(3, "Latency (ms: mean / p50 / p95 / p99)");
        List<List<String>> rows = new ArrayList<>();
        for (LevelMetrics m : ls) {
            rows.add(List.of(m.label(), s(m.ttftMs()), s(m.tpotMs()), s(m.itlMs()), s(m.e2elMs()),
                    m.queueTimeMs() == null ? "unavailable" : s(m.queueTimeMs())));
        }
        d.table(List.of("level", "ttft_ms", "tpot_ms", "itl_ms", "e2el_ms", "queue time (server)"), rows);
        if (!ls.isEmpty()) d.p("Queue time source: " + ls.getFirst().queueTimeSource() + ".");
    }

    private static void batchTable(Doc d, List<LevelMetrics> ls) {
        d.h(3, "Batches and memory");
        List<List<String>> rows = new ArrayList<>();
        for (LevelMetrics m : ls) {
            var b = m.batch();
            var mem = m.memory();
            rows.add(List.of(m.label(), or(b.iterations()), b.meanRowsPerIteration() == null ? "unavailable" : f(b.meanRowsPerIteration()),
                    b.occupancy() == null ? "unavailable" : f(b.occupancy()),
                    b.prefillRowShare() == null ? "unavailable" : f(b.prefillRowShare()) + " / " + f(b.decodeRowShare()),
                    mem.heapAfterGcBytes() == null ? "n/a" : mib(mem.heapAfterGcBytes()),
                    mem.processRssBytes() == null ? "n/a" : mib(mem.processRssBytes()),
                    mem.stateBytesInUseMax() == null ? "unavailable" : mib(mem.stateBytesInUseMax()) + " / " + (mem.stateBudgetBytes() == null ? "?" : mib(mem.stateBudgetBytes())),
                    m.consistency().consistent() ? "yes" : "NO (" + m.consistency() + ")"));
        }
        d.table(List.of("level", "iterations", "rows/iteration", "occupancy", "prefill / decode rows", "heap after GC",
                "RSS", "state max / budget", "counts consistent"), rows);
        List<List<String>> bubbles = new ArrayList<>();
        for (LevelMetrics m : ls) {
            var bubble = m.batch().pipelineBubble();
            if (bubble == null || bubble.isEmpty()) continue;
            List<String> parts = new ArrayList<>();
            bubble.forEach((stage, f) -> parts.add(stage + " " + f(f)));
            bubbles.add(List.of(m.label(), String.join(", ", parts)));
        }
        if (!bubbles.isEmpty()) {
            d.p("Pipeline bubble: the fraction of each level every stage of the route waited instead of computing"
                    + " (the head's from its wait for tokens, later stages by span from their busy time, relayed to the head).");
            d.table(List.of("level", "bubble by stage"), bubbles);
        }
    }

    private static void checksTable(Doc d, List<LevelMetrics> ls) {
        d.h(3, "Fairness and starvation checks");
        List<List<String>> rows = new ArrayList<>();
        for (LevelMetrics m : ls) {
            for (Check c : m.fairness().checks()) {
                rows.add(List.of(m.label(), c.name(), c.status().equals("fail") ? "**FAIL**" : c.status(),
                        Double.isNaN(c.value()) ? "—" : f(c.value()),
                        c.comparison().isEmpty() ? "—" : c.comparison() + " " + f(c.threshold()) + " " + c.unit(), c.detail()));
            }
            var fr = m.fairness();
            if (fr.longestDecodeStallMs() != null) {
                rows.add(List.of(m.label(), "stall times", "info", "—", "—", "longest decode stall "
                        + f(fr.longestDecodeStallMs()) + " ms, longest prefill wait " + f(fr.longestPrefillWaitMs()) + " ms"));
            }
            if (m.probe() != null) {
                rows.add(List.of(m.label(), "probe", "info", "—", "—", m.probe().count() + " probes: TTFT " + s(m.probe().ttftMs())
                        + ", E2EL " + s(m.probe().e2elMs()) + ", stall factor vs idle " + or(m.probe().stallFactor() == null ? null : f(m.probe().stallFactor()))));
            }
        }
        d.table(List.of("level", "check", "status", "value", "threshold", "detail"), rows);
    }

    private static void tenantTable(Doc d, List<LevelMetrics> ls) {
        List<List<String>> rows = new ArrayList<>();
        for (LevelMetrics m : ls) {
            var fr = m.fairness();
            if (fr.tenantShares().size() < 2) continue;
            for (var s : fr.tenantShares()) {
                rows.add(List.of(m.label(), s.tenant(), Integer.toString(s.clients()), Long.toString(s.service()),
                        f(s.share()), s.fairShare() == null ? "n/a" : f(s.fairShare())));
            }
        }
        if (rows.isEmpty()) return;
        d.h(3, "Tenant service shares");
        d.table(List.of("level", "tenant", "clients", "service units", "share", "max-min fair share"), rows);
    }

    /** Through a tracker: how many requests each node served per level, and their TTFT there. */
    private static void servedByTable(Doc d, List<dgr.bench.target.RequestRecord> requests) {
        java.util.Map<String, java.util.Map<String, List<Double>>> byLevel = new java.util.LinkedHashMap<>();
        for (var r : requests) {
            if (r.servedBy() == null || r.probe()) continue;
            byLevel.computeIfAbsent(r.level(), k -> new java.util.TreeMap<>())
                    .computeIfAbsent(r.servedBy(), k -> new ArrayList<>()).add(r.ttftMs());
        }
        if (byLevel.isEmpty()) return;
        List<List<String>> rows = new ArrayList<>();
        byLevel.forEach((level, nodes) -> nodes.forEach((node, ttfts) -> {
            double[] v = ttfts.stream().filter(x -> !Double.isNaN(x)).mapToDouble(Double::doubleValue).sorted().toArray();
            rows.add(List.of(level, node, Integer.toString(ttfts.size()),
                    v.length == 0 ? "—" : f(v[(v.length - 1) / 2]), v.length == 0 ? "—" : f(v[(int) Math.ceil(0.99 * v.length) - 1])));
        }));
        d.h(3, "Requests by serving node (tracker)");
        d.table(List.of("level", "node", "requests", "ttft_ms p50", "ttft_ms p99"), rows);
    }

    static String f(double v) {
        if (Double.isNaN(v)) return "—";
        double a = Math.abs(v);
        return String.format(Locale.ROOT, a >= 100 ? "%.1f" : a >= 1 ? "%.2f" : "%.3f", v);
    }

    static String s(Summary x) {
        return x == null ? "—" : f(x.mean()) + " / " + f(x.p50()) + " / " + f(x.p95()) + " / " + f(x.p99());
    }

    static String or(Object o) { return o == null ? "unavailable" : o.toString(); }

    static String mib(long b) { return String.format(Locale.ROOT, "%.1f MiB", b / 1048576.0); }

    static String gib(long b) { return String.format(Locale.ROOT, "%.1f GiB", b / 1073741824.0); }
}
