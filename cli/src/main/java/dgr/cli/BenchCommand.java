package dgr.cli;

import dgr.bench.Bench;
import dgr.bench.BenchConfig;
import dgr.bench.IntRange;
import dgr.bench.TenantMix;
import dgr.bench.metrics.Slo;
import dgr.bench.metrics.Thresholds;
import dgr.engine.EngineOptions;
import dgr.runtime.SchedulerConfig;
import dgr.runtime.SchedulingPolicy;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code dgr bench}: the saturation and fairness benchmark (docs/bench.md). With no arguments it
 * measures the built-in default model in-process with concurrency 1, 2, 4, 8 and writes
 * bench-result.json, saturation.json, report.md and report.html to {@code bench-out/}.
 */
@Command(name = "bench", mixinStandardHelpOptions = true,
        description = "Measure where batching saturates and whether service stays fair; write saturation.json.")
public final class BenchCommand implements Callable<Integer> {
    @Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Option(names = "--in-process", description = "run engine + scheduler in this process (the default without --url)")
    boolean inProcess;

    @Option(names = {"-m", "--model"}, description = "GGUF model; repeat to measure several (default: the built-in llama-110m Q4_0, made on first use, or dsv4-tiny Q4_0 with --lane v4). With --url: the served artifact, for its sha256")
    List<Path> models = new ArrayList<>();

    @Option(names = "--url", description = "OpenAI-compatible server base URL (dgr node or tracker, llama-server, vLLM)")
    String url;

    @Option(names = "--served-model", description = "model id to request over HTTP (default: every model of /v1/models, each its own run)")
    String servedModel;

    @Option(names = "--api-key", description = "bearer key for --url")
    String apiKey;

    @Option(names = "--lane", description = "dense or v4: measure and report only this lane")
    String lane;

    @Option(names = "--concurrency", split = ",", description = "closed-loop levels, exactly these (default: 1,2,4,8, then"
            + " more until a knee, the row limit, a level missing the SLO, or --sweep-budget)")
    List<Integer> concurrency;

    @Option(names = "--rates", split = ",", description = "open-loop levels in requests/s, Poisson arrivals (default: none)")
    List<Double> rates = new ArrayList<>();

    @Option(names = "--sweep-budget", defaultValue = "100s", description = "time the sweep may extend itself to (default: ${DEFAULT-VALUE})")
    String sweepBudget;

    @Option(names = "--prompt-tokens", defaultValue = "32:64", description = "random prompt length N or A:B (default: ${DEFAULT-VALUE})")
    String promptTokens;

    @Option(names = "--max-tokens", defaultValue = "32", description = "tokens to generate, N or A:B (default: ${DEFAULT-VALUE})")
    String maxTokens;

    @Option(names = "--prompts", description = "JSONL prompts: {\"prompt\": \"...\"} or {\"prompt_token_ids\": [...]}, optional \"max_tokens\"")
    Path prompts;

    @Option(names = "--requests-per-level", defaultValue = "16",
            description = "requests per level, and at least 3 per client of a closed level (default: ${DEFAULT-VALUE})")
    int requestsPerLevel;

    @Option(names = "--duration", defaultValue = "60s", description = "most time a level keeps sending, e.g. 30s, 2m (default: ${DEFAULT-VALUE})")
    String duration;

    @Option(names = "--warmup", defaultValue = "8", description = "warm-up requests, left out of the results (default: ${DEFAULT-VALUE})")
    int warmup;

    @Option(names = "--seed", defaultValue = "42", description = "workload seed (default: ${DEFAULT-VALUE})")
    long seed;

    @Option(names = "--tenants", description = "CLIENTS:TENANTS groups, e.g. 1:1,6:1 = a tenant with 1 client and one with 6 (default: one tenant per client)")
    String tenants;

    @Option(names = "--probe", description = "send tiny probe requests during each level to see how much the load stalls them")
    boolean probe;

    @Option(names = "--slo-ttft-p95", defaultValue = "2000", description = "TTFT p95 target in ms; 0 = none (default: ${DEFAULT-VALUE})")
    double sloTtft;

    @Option(names = "--slo-itl-p95", defaultValue = "200", description = "ITL p95 target in ms; 0 = none (default: ${DEFAULT-VALUE})")
    double sloItl;

    @Option(names = "--knee-slope-ratio", defaultValue = "0.5", description = "knee when the second segment's slope < this × the first's (default: ${DEFAULT-VALUE})")
    double kneeSlopeRatio;

    @Option(names = "--recommend-factor", defaultValue = "1.0", description = "recommended max = factor × saturation,"
            + " never below the largest level measured within the SLO up to saturation (default: ${DEFAULT-VALUE})")
    double recommendFactor;

    @Option(names = "--min-jain", defaultValue = "0.8", description = "fairness check: least Jain's index (default: ${DEFAULT-VALUE})")
    double minJain;

    @Option(names = "--min-fair-share", defaultValue = "0.5", description = "fairness check: least tenant share ÷ max-min fair share (default: ${DEFAULT-VALUE})")
    double minFairShare;

    @Option(names = {"-np", "--parallel", "--max-batch-rows"}, description = "in-process scheduler: most sessions running at once (default: the scheduler's)")
    Integer maxBatchSessions;

    @Option(names = "--policy", description = "in-process scheduler: decode-first or mixed (default: the scheduler's)")
    String policy;

    @Option(names = "--no-fairness", description = "in-process scheduler: switch tenant service counters off (to see the checks fail)")
    boolean noFairness;

    @Option(names = {"-t", "--threads"}, description = "threads per forward pass (default: all cores)")
    Integer threads;

    @Option(names = "--engine", defaultValue = "auto", description = EngineOptions.ENGINE_HELP)
    String engine;

    @picocli.CommandLine.Mixin
    CacheTypeOptions cache = new CacheTypeOptions();

    @Option(names = "--no-ignore-eos", description = "do not send ignore_eos over HTTP (servers that reject unknown fields)")
    boolean noIgnoreEos;

    @Option(names = {"-o", "--out"}, defaultValue = "bench-out", description = "output directory (default: ${DEFAULT-VALUE})")
    Path out;

    @Override
    public Integer call() throws Exception {
        if (url != null && inProcess) throw new IllegalArgumentException("--in-process and --url exclude each other");
        // No -m: the lane's built-in model (dense: llama-tiny, v4: dsv4-tiny), synthesized into the cache.
        List<Path> ms = models.isEmpty() && url == null ? List.of(DefaultModel.forLane(lane)) : models;
        BenchConfig.Builder b = BenchConfig.builder().models(ms).url(url).servedModel(servedModel).apiKey(apiKey)
                .lane(lane).rates(rates).promptTokens(IntRange.parse(promptTokens)).maxTokens(IntRange.parse(maxTokens))
                .prompts(prompts).requestsPerLevel(requestsPerLevel).duration(DurationFlag.parse("--duration", duration)).warmup(warmup)
                .seed(seed).probe(probe).slo(new Slo(sloTtft > 0 ? sloTtft : null, sloItl > 0 ? sloItl : null))
                .kneeSlopeRatio(kneeSlopeRatio).recommendFactor(recommendFactor)
                .thresholds(new Thresholds(minJain, minFairShare, Thresholds.defaults().serviceGapRequests()))
                .ignoreEos(!noIgnoreEos).out(out).dgrVersion(Main.VERSION)
                .commandLine("dgr " + String.join(" ", spec.commandLine().getParseResult().originalArgs()));
        if (tenants != null) {
            TenantMix mix = TenantMix.parse(tenants);
            b.tenants(mix);
            // A tenant mix fixes how many clients run: one level of that many, unless levels are given.
            if (concurrency == null) b.concurrency(List.of(mix.clients()));
        }
        if (concurrency != null) b.concurrency(concurrency);
        // Levels given explicitly are exactly what runs; the default sweep extends itself.
        b.extendSweep(concurrency == null && tenants == null).sweepBudget(DurationFlag.parse("--sweep-budget", sweepBudget));
        SchedulerConfig sc = SchedulerConfig.defaults();
        if (maxBatchSessions != null) sc = sc.withBatch(maxBatchSessions, Math.max(maxBatchSessions, sc.maxBatchTokens()));
        if (policy != null) sc = sc.withPolicy(SchedulingPolicy.valueOf(policy.toUpperCase(Locale.ROOT).replace('-', '_')));
        if (noFairness) sc = sc.withFairness(false);
        EngineOptions eo = cache.apply(EngineOptions.defaults().withKind(EngineOptions.Kind.ofFlag(engine)));
        if (url != null && !eo.cacheTypes().isF32()) {
            throw new IllegalArgumentException("--cache-type-k/--cache-type-v choose the in-process engine's cache; with --url"
                    + " the server's own flags do");
        }
        if (threads != null) eo = eo.withThreads(threads);
        // The engine must accept a whole token budget in one forward pass.
        eo = eo.withMaxRows(Math.max(eo.maxRows(), sc.maxBatchTokens()));
        Bench.Outcome o = new Bench(b.scheduler(sc).engine(eo).build(), System.err).run();
        return o.exitCode();
    }
}
