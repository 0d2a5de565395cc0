package dgr.bench;

import dgr.bench.metrics.Slo;
import dgr.bench.metrics.Thresholds;
import dgr.engine.EngineOptions;
import dgr.runtime.SchedulerConfig;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * Everything one {@code dgr bench} run needs. Build with {@link #builder()}; defaults are the
 * README's main job (llama-tiny in-process, concurrency 1, 2, 4, 8).
 *
 * @param models           GGUF files measured in-process (one run each), or with {@code url} the local
 *                         copy whose hash identifies the server's artifact
 * @param url              an OpenAI-compatible server, or null for in-process
 * @param servedModel      model id to request over HTTP (null: every model /v1/models lists, one run each)
 * @param apiKey           bearer key for HTTP, or null
 * @param lane             {@code dense}, {@code v4}, or null for every lane the models belong to
 * @param concurrency      closed-loop levels
 * @param rates            open-loop levels (requests per second, Poisson arrivals); may be empty
 * @param promptTokens     random prompt length
 * @param maxTokens        tokens to generate per request
 * @param prompts          JSONL prompts instead of random ones, or null
 * @param requestsPerLevel requests per level
 * @param duration         most time a level keeps issuing requests
 * @param warmup           requests run before the first level and left out of the results
 * @param seed             workload seed
 * @param tenants          tenant mix ({@link TenantMix#ONE_PER_CLIENT} by default)
 * @param probe            send probe requests during each level
 * @param probeEvery       pause between probes
 * @param slo              latency targets
 * @param kneeSlopeRatio   the knee rule's X (second slope below X × first)
 * @param recommendFactor  recommended max = factor × saturation
 * @param thresholds       fairness check thresholds
 * @param scheduler        scheduler settings for in-process runs
 * @param engine           engine options for in-process runs
 * @param ignoreEos        ask HTTP servers to ignore end-of-generation (vLLM, llama-server honour it)
 * @param out              output directory
 * @param commandLine      the exact command, for the record
 * @param dgrVersion       dgr's version, for the record
 * @param extendSweep      add closed levels past {@code concurrency} until the sweep has said enough ({@link
 *                         dgr.bench.saturation.SweepPlan})
 * @param sweepBudget      time the extension may bring the closed sweep to
 */
public record BenchConfig(List<Path> models, String url, String servedModel, String apiKey, String lane,
                          List<Integer> concurrency, List<Double> rates, IntRange promptTokens, IntRange maxTokens,
                          Path prompts, int requestsPerLevel, Duration duration, int warmup, long seed,
                          TenantMix tenants, boolean probe, Duration probeEvery, Slo slo, double kneeSlopeRatio,
                          double recommendFactor, Thresholds thresholds, SchedulerConfig scheduler,
                          EngineOptions engine, boolean ignoreEos, Path out, String commandLine, String dgrVersion,
                          boolean extendSweep, Duration sweepBudget) {
    public BenchConfig {
        models = List.copyOf(models);
        concurrency = List.copyOf(concurrency);
        rates = List.copyOf(rates);
        if (url == null && models.isEmpty()) throw new IllegalArgumentException("give -m FILE (in-process) or --url URL");
        if (concurrency.isEmpty() && rates.isEmpty()) throw new IllegalArgumentException("no levels: give --concurrency or --rates");
        for (int c : concurrency) if (c < 1) throw new IllegalArgumentException("concurrency must be >= 1, got " + c);
        for (double r : rates) if (!(r > 0)) throw new IllegalArgumentException("rates must be > 0, got " + r);
        if (requestsPerLevel < 1) throw new IllegalArgumentException("--requests-per-level must be >= 1");
        if (warmup < 0) throw new IllegalArgumentException("--warmup must be >= 0");
        if (lane != null && !lane.equals("dense") && !lane.equals("v4")) {
            throw new IllegalArgumentException("--lane must be dense or v4, got " + lane);
        }
    }

    public static Builder builder() { return new Builder(); }

    /** Mutable construction of the record (many optional settings). */
    public static final class Builder {
        List<Path> models = List.of();
        String url;
        String servedModel;
        String apiKey;
        String lane;
        List<Integer> concurrency = List.of(1, 2, 4, 8);
        List<Double> rates = List.of();
        IntRange promptTokens = IntRange.parse("64:128");
        IntRange maxTokens = IntRange.fixed(64);
        Path prompts;
        int requestsPerLevel = 32;
        Duration duration = Duration.ofSeconds(60);
        int warmup = 16;
        long seed = 42;
        TenantMix tenants = TenantMix.ONE_PER_CLIENT;
        boolean probe;
        Duration probeEvery = Duration.ofMillis(200);
        Slo slo = new Slo(2000.0, 200.0);
        double kneeSlopeRatio = 0.5;
        double recommendFactor = 1.0;
        Thresholds thresholds = Thresholds.defaults();
        SchedulerConfig scheduler = SchedulerConfig.defaults();
        EngineOptions engine = EngineOptions.defaults();
        boolean ignoreEos = true;
        Path out = Path.of("bench-out");
        String commandLine = "dgr bench";
        String dgrVersion = "dev";
        boolean extendSweep;
        Duration sweepBudget = Duration.ofSeconds(100);

        public Builder models(List<Path> v) { models = v; return this; }
        public Builder model(Path v) { models = List.of(v); return this; }
        public Builder url(String v) { url = v; return this; }
        public Builder servedModel(String v) { servedModel = v; return this; }
        public Builder apiKey(String v) { apiKey = v; return this; }
        public Builder lane(String v) { lane = v; return this; }
        public Builder concurrency(List<Integer> v) { concurrency = v; return this; }
        public Builder rates(List<Double> v) { rates = v; return this; }
        public Builder promptTokens(IntRange v) { promptTokens = v; return this; }
        public Builder maxTokens(IntRange v) { maxTokens = v; return this; }
        public Builder prompts(Path v) { prompts = v; return this; }
        public Builder requestsPerLevel(int v) { requestsPerLevel = v; return this; }
        public Builder duration(Duration v) { duration = v; return this; }
        public Builder warmup(int v) { warmup = v; return this; }
        public Builder seed(long v) { seed = v; return this; }
        public Builder tenants(TenantMix v) { tenants = v; return this; }
        public Builder probe(boolean v) { probe = v; return this; }
        public Builder probeEvery(Duration v) { probeEvery = v; return this; }
        public Builder slo(Slo v) { slo = v; return this; }
        public Builder kneeSlopeRatio(double v) { kneeSlopeRatio = v; return this; }
        public Builder recommendFactor(double v) { recommendFactor = v; return this; }
        public Builder thresholds(Thresholds v) { thresholds = v; return this; }
        public Builder scheduler(SchedulerConfig v) { scheduler = v; return this; }
        public Builder engine(EngineOptions v) { engine = v; return this; }
        public Builder ignoreEos(boolean v) { ignoreEos = v; return this; }
        public Builder out(Path v) { out = v; return this; }
        public Builder commandLine(String v) { commandLine = v; return this; }
        public Builder dgrVersion(String v) { dgrVersion = v; return this; }
        /** Levels beyond {@code concurrency} until a knee, the row limit, the SLO or {@code sweepBudget}. */
        public Builder extendSweep(boolean v) { extendSweep = v; return this; }
        public Builder sweepBudget(Duration v) { sweepBudget = v; return this; }

        public BenchConfig build() {
            return new BenchConfig(models, url, servedModel, apiKey, lane, concurrency, rates, promptTokens, maxTokens,
                    prompts, requestsPerLevel, duration, warmup, seed, tenants, probe, probeEvery, slo, kneeSlopeRatio,
                    recommendFactor, thresholds, scheduler, engine, ignoreEos, out, commandLine, dgrVersion,
                    extendSweep, sweepBudget);
        }
    }
}
