package dgr.bench;

import dgr.bench.load.Level;
import dgr.bench.load.LoadRunner;
import dgr.bench.metrics.LevelAnalyzer;
import dgr.bench.metrics.LevelMetrics;
import dgr.bench.metrics.Summary;
import dgr.bench.report.BenchResult;
import dgr.bench.report.Environment;
import dgr.bench.report.LaneStatus;
import dgr.bench.report.ReportWriter;
import dgr.bench.report.ResultWriter;
import dgr.bench.report.RunResult;
import dgr.bench.report.SaturationFile;
import dgr.bench.saturation.KneeDetector;
import dgr.bench.saturation.Recommendation;
import dgr.bench.saturation.SaturationAnalysis;
import dgr.bench.saturation.SweepPlan;
import dgr.bench.target.HttpTarget;
import dgr.bench.target.InProcessTarget;
import dgr.bench.target.IterationSample;
import dgr.bench.target.RequestRecord;
import dgr.bench.target.ServerObservation;
import dgr.bench.target.Target;
import dgr.bench.target.TargetInfo;
import dgr.bench.workload.PromptFile;
import dgr.bench.workload.Workload;
import dgr.engine.ArtifactHash;
import dgr.engine.Engine;
import dgr.engine.Engines;
import dgr.gguf.GgufArtifact;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The saturation and fairness benchmark: for each target (a model in-process, or a server), a
 * warm-up, a closed-loop concurrency sweep and optional open-loop rate levels, then the saturation
 * analysis, and the four outputs (bench-result.json, saturation.json, report.md, report.html).
 */
public final class Bench {
    /** Exit status when a fairness or starvation check failed. */
    public static final int EXIT_CHECK_FAILED = 3;

    /** What a run produced; {@code exitCode} is 0, or {@link #EXIT_CHECK_FAILED}. */
    public record Outcome(BenchResult result, SaturationFile saturation, int exitCode) {}

    private static final List<String> LANES = List.of("dense", "v4");
    /** Random prompt ids over HTTP stay below this when the server does not report its vocabulary. */
    private static final int HTTP_VOCAB_FALLBACK = 1000;
    /** Closed levels send at least this many requests per client ({@link #requestsAt}). */
    static final int ROUNDS_PER_LEVEL = 3;

    private final BenchConfig config;
    private final PrintStream log;

    /** @param log progress and notes (stderr), or null for silence */
    public Bench(BenchConfig config, PrintStream log) {
        this.config = config;
        this.log = log;
    }

    public Outcome run() throws InterruptedException {
        Environment env = Environment.capture(config.dgrVersion(), config.commandLine());
        long origin = System.nanoTime();
        List<RunResult> runs = new ArrayList<>();
        Map<String, LaneStatus> lanes = new LinkedHashMap<>();
        var prompts = config.prompts() == null ? List.<PromptFile.Entry>of() : PromptFile.read(config.prompts());
        if (config.url() != null) {
            // Every model the server lists (or the one asked for), each its own run: a node serving a
            // llama and a deepseek4 model yields a dense and a v4 run, never one mixed measurement.
            List<String> served = config.servedModel() != null ? List.of(config.servedModel())
                    : HttpTarget.servedModels(config.url(), config.apiKey());
            if (served.isEmpty()) throw new IllegalArgumentException(config.url() + "/v1/models lists no model");
            String sha = config.models().isEmpty() ? null : ArtifactHash.sha256(config.models().getFirst());
            for (String id : served) {
                try (Target t = new HttpTarget(config.url(), id, config.apiKey(),
                        config.lane() == null ? "dense" : config.lane(), served.size() == 1 ? sha : null,
                        config.ignoreEos())) {
                    String lane = t.info().lane();
                    if (config.lane() != null && !config.lane().equals(lane)) {
                        note("skipping served model " + id + ": " + lane + " lane, --lane " + config.lane() + " asked");
                        continue;
                    }
                    runs.add(measure(t, prompts, origin, env));
                    lanes.putIfAbsent(lane, new LaneStatus(lane, "measured", "over HTTP at " + config.url()
                            + ", model " + id + ", recipe " + t.info().recipeId()));
                }
            }
        } else {
            int sessionTokens = (int) Math.round(config.promptTokens().mean() + config.maxTokens().mean());
            for (Path model : config.models()) {
                String lane = TargetInfo.laneOf(architectureOf(model));
                if (config.lane() != null && !config.lane().equals(lane)) {
                    throw new IllegalArgumentException(model + " is a " + lane + "-lane model (architecture "
                            + architectureOf(model) + "), but --lane " + config.lane() + " was asked");
                }
                Engine engine;
                try {
                    engine = Engines.load(model, config.engine());
                } catch (IllegalArgumentException e) {
                    // An architecture this build's engines cannot run: the lane is reported, not measured.
                    lanes.putIfAbsent(lane, new LaneStatus(lane, "not measured", e.getMessage()));
                    note("not measured: " + e.getMessage());
                    continue;
                }
                try (Target t = new InProcessTarget(engine, config.scheduler(), model.toString(),
                        config.duration().plus(config.duration()).plusSeconds(60), sessionTokens)) {
                    runs.add(measure(t, prompts, origin, env));
                    lanes.putIfAbsent(lane, new LaneStatus(lane, "measured", "in-process, recipe " + t.info().recipeId()));
                }
            }
        }
        for (String lane : LANES) {
            if (config.lane() != null && !config.lane().equals(lane)) {
                lanes.putIfAbsent(lane, new LaneStatus(lane, "not measured", "--lane " + config.lane() + " restricted this run"));
                continue;
            }
            lanes.putIfAbsent(lane, new LaneStatus(lane, "not measured", lane.equals("v4")
                    ? "no deepseek4 model was measured in this run (give -m FILE or --lane v4)"
                    : "no llama model was measured in this run"));
        }
        List<LaneStatus> laneList = List.copyOf(lanes.values());
        BenchResult result = new BenchResult(env, configRecord(), runs, laneList);
        SaturationFile sat = new SaturationFile(SaturationFile.SCHEMA_VERSION, "dgr bench " + config.dgrVersion(),
                env.startedAt(), env.machine(), runs.stream().map(RunResult::recommendation).filter(r -> r != null).toList(),
                laneList.stream().filter(l -> !l.status().equals("measured")).toList());
        Path out = config.out();
        new ResultWriter().writeResult(result, out.resolve("bench-result.json"));
        new ResultWriter().writeSaturation(sat, out.resolve("saturation.json"));
        new ReportWriter().write(result, out);
        long failed = result.failedChecks();
        note("wrote " + out.resolve("bench-result.json") + ", saturation.json, report.md, report.html"
                + (failed > 0 ? "; " + failed + " fairness/starvation check(s) FAILED" : ""));
        return new Outcome(result, sat, failed > 0 ? EXIT_CHECK_FAILED : 0);
    }

    private RunResult measure(Target target, List<PromptFile.Entry> prompts, long origin, Environment env)
            throws InterruptedException {
        TargetInfo info = target.info();
        note("measuring " + info.kind() + " " + info.endpoint() + " (" + info.lane() + " lane, recipe " + info.recipeId() + ")");
        int vocab = info.vocabSize() > 0 ? info.vocabSize() : HTTP_VOCAB_FALLBACK;
        Workload workload = new Workload(config.promptTokens(), config.maxTokens(), prompts, vocab, config.seed());
        LoadRunner runner = new LoadRunner(target, origin, log);
        List<RequestRecord> all = new ArrayList<>();
        Map<String, List<IterationSample>> iterations = new LinkedHashMap<>();
        List<LevelMetrics> levels = new ArrayList<>();
        LevelAnalyzer analyzer = new LevelAnalyzer(info, config.slo(), config.thresholds());

        Double idleProbe = null;
        LoadRunner.Probe probe = null;
        if (config.probe()) {
            probe = new LoadRunner.Probe(workload.probe(4, 4), config.probeEvery());
            List<Double> e2el = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                RequestRecord r = target.send(-1 - i, "idle-probe", "probe", -1, probe.template(), origin);
                if (r.ok()) e2el.add(r.e2elMs());
            }
            Summary s = Summary.of(e2el.stream().mapToDouble(Double::doubleValue).toArray());
            idleProbe = s == null ? null : s.p50();
        }

        boolean explicitTenants = !config.tenants().oneTenantPerClient();
        List<Integer> sweep = config.concurrency();
        if (explicitTenants && config.tenants().clients() > 0 && !sweep.contains(config.tenants().clients())) {
            // A tenant mix fixes how many clients run; the sweep is that one level.
            sweep = List.of(config.tenants().clients());
        }
        if (config.warmup() > 0) {
            // Warm the JIT on both paths the sweep uses: single rows (GEMV) and full batches.
            int max = sweep.stream().mapToInt(Integer::intValue).max().orElse(1);
            int single = (config.warmup() + 1) / 2;
            for (int[] w : new int[][] {{1, single}, {Math.min(max, config.warmup() - single), config.warmup() - single}}) {
                if (w[1] < 1 || w[0] < 1) continue;
                Level level = new Level("warmup", true, w[0], 0, w[1], config.duration());
                target.beginLevel();
                List<RequestRecord> recs = runner.run(level, workload, config.tenants().assign(w[0]), null, config.seed());
                target.endLevel(recs, origin);
                all.addAll(recs);
            }
        }
        List<Level> plan = new ArrayList<>();
        for (int c : sweep) plan.add(Level.closed(c, requestsAt(c), config.duration()));
        for (double r : config.rates()) plan.add(Level.open(r, config.requestsPerLevel(), config.duration()));
        SweepPlan extension = config.extendSweep() && !explicitTenants
                ? new SweepPlan(new KneeDetector(config.kneeSlopeRatio()), config.slo(), info.rowLimit(), config.sweepBudget())
                : null;
        long sweepStart = System.nanoTime();
        String sweepEnd = extension == null ? "the levels asked for (--concurrency)" : null;
        for (int i = 0; i < plan.size(); i++) {
            Level level = plan.get(i);
            int clients = level.closedLoop() ? level.concurrency() : Math.max(1, config.tenants().clients());
            List<String> tenants = config.tenants().assign(clients);
            Map<String, Integer> clientsByTenant = new LinkedHashMap<>();
            for (String t : tenants) clientsByTenant.merge(t, 1, Integer::sum);
            target.beginLevel();
            List<RequestRecord> recs = runner.run(level, workload, tenants, probe, config.seed());
            ServerObservation obs = target.endLevel(recs, origin);
            Long heap = Environment.heapAfterGc();
            Long rss = Environment.processRssBytes();
            LevelMetrics m = analyzer.analyze(level, recs, obs, clientsByTenant, explicitTenants, idleProbe, heap, rss);
            levels.add(m);
            all.addAll(recs);
            if (!obs.iterations().isEmpty()) iterations.put(level.label(), obs.iterations());
            note(String.format("%-6s output %.1f tok/s, TTFT p95 %s ms, ITL p95 %s ms, occupancy %s%s", level.label(),
                    m.outputThroughput(), m.ttftMs() == null ? "-" : String.format("%.1f", m.ttftMs().p95()),
                    m.itlMs() == null ? "-" : String.format("%.1f", m.itlMs().p95()),
                    m.batch().occupancy() == null ? "unavailable" : String.format("%.2f", m.batch().occupancy()),
                    m.fairness().checks().stream().anyMatch(c -> c.failed()) ? ", CHECK FAILED: "
                            + m.fairness().checks().stream().filter(c -> c.failed()).map(c -> c.name()).toList() : "")
                    + (m.outputThroughputSpread() == null ? "" : String.format(", spread %.0f%%", 100 * m.outputThroughputSpread().relative())));
            // After the last closed level asked for: extend the sweep until it has said enough.
            boolean lastClosed = level.closedLoop() && (i + 1 == plan.size() || !plan.get(i + 1).closedLoop());
            if (extension != null && lastClosed) {
                switch (extension.next(levels, Duration.ofNanos(System.nanoTime() - sweepStart))) {
                    case SweepPlan.Next n -> plan.add(i + 1, Level.closed(n.concurrency(), requestsAt(n.concurrency()), config.duration()));
                    case SweepPlan.Done d -> {
                        sweepEnd = d.reason();
                        note("sweep ends: " + sweepEnd);
                    }
                }
            }
        }
        Recommendation rec = null;
        if (levels.stream().anyMatch(l -> l.mode().equals("closed"))) {
            double sessionTokens = config.promptTokens().mean() + config.maxTokens().mean();
            rec = new SaturationAnalysis(new KneeDetector(config.kneeSlopeRatio()), config.recommendFactor(), config.slo())
                    .analyze(info, levels, sessionTokens, env.startedAt(), env.machine());
            note("recommendation: max concurrency " + rec.recommendedMaxConcurrency() + " (" + rec.recommendationBasis() + ")");
        }
        return new RunResult(info, levels, rec, all, iterations, idleProbe, sweepEnd);
    }

    /**
     * Requests for a closed level of {@code c} clients: the configured count, and in the self-extending
     * sweep at least {@link #ROUNDS_PER_LEVEL} per client, so every level runs several full rounds at its
     * concurrency and its throughput is a steady state, not a ramp.
     */
    private int requestsAt(int c) {
        return config.extendSweep() ? Math.max(config.requestsPerLevel(), ROUNDS_PER_LEVEL * c) : config.requestsPerLevel();
    }

    /** The settings as recorded in bench-result.json. */
    private Map<String, Object> configRecord() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("models", config.models().stream().map(Path::toString).toList());
        m.put("url", config.url());
        m.put("lane", config.lane());
        m.put("concurrency", config.concurrency());
        m.put("extend_sweep", config.extendSweep());
        m.put("sweep_budget_s", config.sweepBudget().toSeconds());
        m.put("rates", config.rates());
        m.put("prompt_tokens", config.promptTokens().toString());
        m.put("max_tokens", config.maxTokens().toString());
        m.put("prompts", config.prompts() == null ? null : config.prompts().toString());
        m.put("requests_per_level", config.requestsPerLevel());
        m.put("duration_s", config.duration().toMillis() / 1000.0);
        m.put("warmup", config.warmup());
        m.put("seed", config.seed());
        m.put("tenants", config.tenants().toString());
        m.put("probe", config.probe());
        m.put("slo_ttft_p95_ms", config.slo().ttftP95Ms());
        m.put("slo_itl_p95_ms", config.slo().itlP95Ms());
        m.put("knee_slope_ratio", config.kneeSlopeRatio());
        m.put("recommend_factor", config.recommendFactor());
        m.put("thresholds", config.thresholds());
        m.put("scheduler", config.url() == null ? config.scheduler() : null);
        m.put("engine", config.url() == null ? config.engine() : null);
        return m;
    }

    /** {@code general.architecture} of a GGUF file, read from its metadata without loading the model. */
    static String architectureOf(Path model) {
        try (GgufArtifact a = GgufArtifact.open(model)) {
            return a.metadata().getString("general.architecture", "");
        }
    }

    private void note(String s) {
        if (log != null) log.println("bench: " + s);
    }

    static Duration ms(long v) { return Duration.ofMillis(v); }
}
