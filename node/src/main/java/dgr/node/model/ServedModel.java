package dgr.node.model;

import dgr.engine.Engine;
import dgr.engine.EngineOptions;
import dgr.engine.Engines;
import dgr.engine.tokenizer.Tokenizer;
import dgr.engine.sampler.SamplerConfig;
import dgr.node.ModelSpec;
import dgr.node.ServingOptions;
import dgr.node.api.ApiError;
import dgr.engine.chat.ChatMessage;
import dgr.node.api.SamplingParams;
import dgr.node.metrics.Load;
import dgr.node.metrics.NodeMetrics;
import dgr.runtime.Scheduler;
import dgr.runtime.SchedulerConfig;
import dgr.runtime.StopConditions;
import dgr.runtime.TextDecoder;
import dgr.engine.sampler.TokenSampler;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.IntStream;

/**
 * One model a node serves: its engine, its scheduler (one per engine), its tokenizer and chat
 * template, and the adapters that turn an API request's settings into a session's sampler, decoder
 * and stop conditions.
 */
public final class ServedModel implements AutoCloseable {
    private final String id;
    private final Path path;
    private final Engine engine;
    private final Scheduler scheduler;
    private final Tokenizer tokenizer;
    private final ChatFormatter chat;
    private final int[] endTokenIds;
    private final long created;
    private final ConcurrencyLimit limit;
    /** What a request's omitted sampling fields take. */
    private final SamplerConfig samplingDefaults;
    /** The rest of the route when this node is a head, else null. */
    private final dgr.node.stage.HeadDownstream route;

    private ServedModel(String id, Path path, Engine engine, Scheduler scheduler, Tokenizer tokenizer,
                        ConcurrencyLimit limit, ServingOptions serving, dgr.node.stage.HeadDownstream route) {
        this.limit = limit;
        this.route = route;
        this.id = id;
        this.path = path;
        this.engine = engine;
        this.scheduler = scheduler;
        this.tokenizer = tokenizer;
        this.chat = serving.chatTemplate() == null ? ChatFormatter.of(tokenizer) : ChatFormatter.of(tokenizer, serving.chatTemplate());
        this.samplingDefaults = serving.sampling();
        this.endTokenIds = IntStream.range(0, tokenizer.vocabSize()).filter(tokenizer::isEndOfGeneration).toArray();
        this.created = System.currentTimeMillis() / 1000;
    }

    /** Null when this model serves on its own or its route answered; else what its head waits for. */
    public String waitingFor() { return route == null ? null : route.waitingFor(); }

    /**
     * Loads the engine (its row limit set to the scheduler's {@code maxBatchTokens}), so the node can
     * read its recipe before it decides the scheduler's limits. Throw-away passes follow
     * ({@link dgr.engine.WarmUp}): decode rows and prompt chunks of the scheduler's size, until the JIT is
     * quiet, so the first requests are not served by uncompiled kernels (whatever span the engine holds).
     */
    public static Engine loadEngine(ModelSpec spec, EngineOptions engineOptions, SchedulerConfig base) {
        Engine engine = Engines.load(spec.path(), engineOptions.withMaxRows(base.maxBatchTokens()));
        try {
            long t0 = System.nanoTime();
            dgr.engine.WarmUp.run(engine, 2);
            int passes = dgr.engine.WarmUp.decode(engine, base.maxPrefillChunk());
            System.getLogger(ServedModel.class.getName()).log(System.Logger.Level.INFO, "warm-up of " + spec.id() + ": "
                    + passes + " passes (decode rows, prompt chunks of " + base.maxPrefillChunk() + ") in "
                    + (System.nanoTime() - t0) / 1_000_000 + " ms");
        } catch (RuntimeException | Error e) {
            engine.close();
            throw e;
        }
        return engine;
    }

    /**
     * Takes ownership of a loaded engine (closed on failure), builds the tokenizer from the file's
     * metadata, and starts a scheduler whose running-session cap is {@code limit} with the metrics
     * listening.
     *
     * @param base the node's scheduler settings; its {@code maxBatchSessions} is replaced by the limit
     */
    public static ServedModel start(ModelSpec spec, Engine engine, SchedulerConfig base, ConcurrencyLimit limit,
                                    NodeMetrics metrics) {
        return start(spec, engine, base, limit, metrics, ServingOptions.defaults());
    }

    /** @param serving the operator's sampling defaults and chat template (in place of the model's own, when set) */
    public static ServedModel start(ModelSpec spec, Engine engine, SchedulerConfig base, ConcurrencyLimit limit,
                                    NodeMetrics metrics, ServingOptions serving) {
        return start(spec, engine, base, limit, metrics, serving, null);
    }

    /** As above; with {@code route} the engine runs a head's span and the route the rest (closed with the model). */
    public static ServedModel start(ModelSpec spec, Engine engine, SchedulerConfig base, ConcurrencyLimit limit,
                                    NodeMetrics metrics, ServingOptions serving, dgr.node.stage.HeadDownstream route) {
        try {
            // A batch must fit one decode row per running session in one forward pass.
            int rows = limit.maxRunningSessions();
            SchedulerConfig config = base.withBatch(rows, Math.max(rows, base.maxBatchTokens()));
            if (config.maxBatchTokens() > engine.features().maxRows()) {
                throw new IllegalArgumentException("model " + spec.id() + ": a cap of " + rows
                        + " running sessions needs " + config.maxBatchTokens() + " rows per forward pass, the engine takes "
                        + engine.features().maxRows());
            }
            Tokenizer tokenizer = Tokenizer.fromMetadata(engine.info().metadata());
            Scheduler scheduler = new Scheduler(engine, config, route);
            ServedModel m = new ServedModel(spec.id(), spec.path(), engine, scheduler, tokenizer, limit, serving, route);
            scheduler.addListener(metrics.register(spec.id(), config.maxBatchSessions(), m::load));
            metrics.registerPool(spec.id(), engine::pooledStateBytes);
            scheduler.start();
            return m;
        } catch (RuntimeException e) {
            if (route != null) route.close();
            engine.close();
            throw e;
        }
    }

    public String id() { return id; }

    public Path path() { return path; }

    public Engine engine() { return engine; }

    public Scheduler scheduler() { return scheduler; }

    /** The running-session cap in force and where it came from. */
    public ConcurrencyLimit concurrencyLimit() { return limit; }

    public int vocabSize() { return engine.info().vocabSize(); }

    /** Unix seconds when this model was loaded ({@code created} in {@code /v1/models}). */
    public long created() { return created; }

    public int contextLength() { return engine.recipe().contextLength(); }

    public Load load() {
        return new Load(scheduler.runningCount(), scheduler.waitingCount(), scheduler.stateBytesInUse(),
                scheduler.config().stateBudgetBytes());
    }

    /**
     * Completion prompt text to ids the way llama.cpp's server does: BOS when the vocabulary asks
     * for it, and special-token text recognised as special tokens.
     */
    public int[] encodePrompt(String text) {
        return tokenizer.encode(text, tokenizer.addBosByDefault(), true);
    }

    /** Token ids outside the vocabulary are the caller's error, named before anything is queued. */
    public void checkTokenIds(int[] ids) {
        for (int i = 0; i < ids.length; i++) {
            if (ids[i] >= tokenizer.vocabSize()) {
                throw ApiError.invalid("prompt token id " + ids[i] + " at index " + i + " is outside the vocabulary"
                        + " [0, " + tokenizer.vocabSize() + ") of model '" + id + "'.", "prompt");
            }
        }
    }

    /** The conversation rendered with the model's chat template (and the request's extra template variables) and tokenized. */
    public int[] encodeChat(List<ChatMessage> messages, java.util.Map<String, Object> templateKwargs) {
        return chat.encode(messages, templateKwargs);
    }

    /** End-of-generation ids plus {@code maxTokens} and the request's stop strings. */
    public StopConditions stopConditions(int maxTokens, List<String> stop, boolean ignoreEos) {
        StopConditions c = StopConditions.maxTokens(maxTokens).withStopStrings(stop.toArray(String[]::new));
        return ignoreEos ? c : c.withEndTokens(endTokenIds);
    }

    public TextDecoder newDecoder() {
        return tokenizer.detokenizer()::push;
    }

    /** The request's sampler; what it leaves out comes from the server's defaults ({@code dgr serve --temp ...}). */
    public TokenSampler newSampler(SamplingParams p) {
        return Samplers.of(p, samplingDefaults, engine.info().vocabSize(), contextLength());
    }

    /** A sampler continuing a session resumed from {@code generated} tokens, at draw {@code step}. */
    public TokenSampler resumedSampler(SamplingParams p, int[] generated, long step) {
        return Samplers.resumed(p, samplingDefaults, engine.info().vocabSize(), contextLength(), generated, step);
    }

    @Override
    public void close() {
        // The route first: a scheduler blocked on a reply from it is released and can stop.
        if (route != null) route.close();
        scheduler.close();
        engine.close();
    }
}
