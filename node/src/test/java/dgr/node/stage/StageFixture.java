package dgr.node.stage;

import dgr.engine.Engine;
import dgr.engine.EngineOptions;
import dgr.engine.Engines;
import dgr.engine.sampler.Sampler;
import dgr.engine.sampler.SamplerConfig;
import dgr.gguf.synth.QuantMix;
import dgr.gguf.synth.Synth;
import dgr.gguf.synth.SynthPreset;
import dgr.runtime.Scheduler;
import dgr.runtime.SchedulerConfig;
import dgr.runtime.SessionEvent;
import dgr.runtime.SessionRequest;
import dgr.runtime.StopConditions;
import dgr.runtime.Submission;
import dgr.engine.sampler.TokenSampler;
import dgr.runtime.TokenStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** Models, routes of real gRPC stages on 127.0.0.1, and sessions run through them, for the stage tests. */
final class StageFixture {
    static final String TOKEN = "test-cluster-token";
    /** llama-tiny's shape with four layers, so a route can have three stages at any split. */
    static final SynthPreset LLAMA_TINY4 = new SynthPreset("llama-tiny4", "llama", 256, 4, 4, 2, 768, 2048, 10000f, false, "tiny-gpt2");
    private static Path dir;

    private StageFixture() {}

    static synchronized Path llamaTiny4() {
        try {
            if (dir == null) dir = Files.createTempDirectory("dgr-stage-models");
            Path p = dir.resolve("llama-tiny4-Q4_0.gguf");
            if (!Files.exists(p)) Synth.write(LLAMA_TINY4, QuantMix.parse("Q4_0"), 7, p);
            return p;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static Path dsv4Tiny() {
        return Path.of(System.getProperty("dgr.repo.root", "."), "engine/src/test/resources/conformance/models/dsv4-tiny.gguf");
    }

    static EngineOptions options() {
        return EngineOptions.defaults().withKind(EngineOptions.Kind.SIMD).withThreads(1).withMaxRows(64);
    }

    static final StepClock PATIENT = new StepClock(20_000_000_000L, 4, 50_000_000L, 30_000_000_000L);

    static StageServer.Options stageOptions(Duration orphanGrace) {
        return new StageServer.Options("127.0.0.1", 0, ClusterToken.of(TOKEN), PATIENT, orphanGrace);
    }

    /** A session's request: greedy for even ids, seeded sampling (temperature 0.9, top-p 0.95) for odd. */
    static TokenSampler sampler(int session, int vocab) {
        SamplerConfig c = session % 2 == 0 ? SamplerConfig.greedy()
                : new SamplerConfig(0.9f, 0, 0.95f, 0f, 1f, 0.2f, 0.1f, 64, 1000 + session);
        Sampler s = new Sampler(c, vocab);
        return new TokenSampler() {
            @Override
            public int sample(float[] logits, int offset, int width) { return s.sample(logits, offset, width); }

            @Override
            public SamplerConfig portableConfig() { return c; }
        };
    }

    static int[] prompt(int session) {
        int n = 3 + 5 * session;
        int[] p = new int[n];
        for (int i = 0; i < n; i++) p[i] = 1 + (session * 97 + i * 31) % 1000;
        return p;
    }

    /** Runs sessions {@code ids} at once on the scheduler; their generated tokens, in id order. */
    static List<List<Integer>> run(Scheduler scheduler, int vocab, int[] ids, int maxTokens) throws InterruptedException {
        return run(scheduler, ids, maxTokens, id -> sampler(id, vocab));
    }

    /** As {@link #run(Scheduler, int, int[], int)} with each session's sampler from {@code samplers}. */
    static List<List<Integer>> run(Scheduler scheduler, int[] ids, int maxTokens, java.util.function.IntFunction<TokenSampler> samplers)
            throws InterruptedException {
        List<TokenStream> streams = new ArrayList<>();
        for (int id : ids) {
            TokenStream stream = new TokenStream();
            var req = new SessionRequest("t" + id, prompt(id), samplers.apply(id), StopConditions.maxTokens(maxTokens),
                    null, null, stream);
            if (!(scheduler.submit(req) instanceof Submission.Accepted)) throw new IllegalStateException("refused");
            streams.add(stream);
        }
        List<List<Integer>> out = new ArrayList<>();
        for (TokenStream s : streams) out.add(tokens(s));
        return out;
    }

    static List<Integer> tokens(TokenStream s) throws InterruptedException {
        List<Integer> tokens = new ArrayList<>();
        while (true) {
            SessionEvent e = s.poll(60, java.util.concurrent.TimeUnit.SECONDS);
            if (e == null) throw new IllegalStateException("no event in 60 s");
            switch (e) {
                case SessionEvent.TokenEvent t -> tokens.add(t.tokenId());
                case SessionEvent.Finished f -> {
                    if (f.reason() != dgr.runtime.FinishReason.LENGTH && f.reason() != dgr.runtime.FinishReason.STOP) {
                        throw new IllegalStateException("session ended " + f.reason() + ": " + f.message());
                    }
                    return tokens;
                }
            }
        }
    }

    /** Whole model on one scheduler: the reference. */
    static List<List<Integer>> single(Path model, int[] ids, int maxTokens) throws InterruptedException {
        try (Engine e = Engines.load(model, options()); Scheduler s = new Scheduler(e, SchedulerConfig.defaults().withBatch(16, 64))) {
            s.start();
            return run(s, e.info().vocabSize(), ids, maxTokens);
        }
    }

    /** A route split at {@code splits} (e.g. {1, 3} for [0,1) [1,3) [3,n)), stages in this JVM on real gRPC ports. */
    static final class Route implements AutoCloseable {
        final Engine head;
        final List<Engine> engines = new ArrayList<>();
        final List<StageServer> stages = new ArrayList<>();
        final HeadDownstream downstream;
        final Scheduler scheduler;

        Route(Path model, int[] splits, Duration orphanGrace) {
            this(model, splits, orphanGrace, 0);
        }

        /** With {@code depth} micro-batches on the route at once (0: one per stage). */
        Route(Path model, int[] splits, Duration orphanGrace, int depth) {
            head = Engines.load(model, options().withSpan(0, splits[0]));
            StringBuilder route = new StringBuilder();
            for (int i = 0; i < splits.length; i++) {
                Engine e = Engines.load(model, options().withSpan(splits[i], i + 1 < splits.length ? splits[i + 1] : -1));
                engines.add(e);
                StageServer s = StageServer.start(e, stageOptions(orphanGrace));
                stages.add(s);
                if (i > 0) route.append(',');
                route.append("127.0.0.1:").append(s.port());
            }
            // A 20 s floor: these routes test bits, not detection, and a machine shared by many builds stalls for seconds.
            downstream = new HeadDownstream(head, RouteSpec.parse(route.toString()), ClusterToken.of(TOKEN), PATIENT, depth);
            scheduler = new Scheduler(head, SchedulerConfig.defaults().withBatch(16, 64), downstream);
            scheduler.start();
        }

        List<List<Integer>> run(int[] ids, int maxTokens) throws InterruptedException {
            return StageFixture.run(scheduler, head.info().vocabSize(), ids, maxTokens);
        }

        @Override
        public void close() {
            downstream.close();
            scheduler.close();
            for (StageServer s : stages) s.close();
            for (Engine e : engines) e.close();
            head.close();
        }
    }
}
