package dgr.bench.target;

import dgr.bench.metrics.Summary;
import dgr.bench.workload.RequestSpec;
import dgr.engine.Engine;
import dgr.engine.tokenizer.Tokenizer;
import dgr.engine.sampler.GreedySampler;
import dgr.runtime.Scheduler;
import dgr.runtime.SchedulerConfig;
import dgr.runtime.SchedulerEvent;
import dgr.runtime.SchedulerListener;
import dgr.runtime.SessionEvent;
import dgr.runtime.SessionListener;
import dgr.runtime.SessionRequest;
import dgr.runtime.StopConditions;
import dgr.runtime.Submission;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * An engine and its scheduler in this process, no HTTP: the benchmark submits sessions directly
 * and listens to the scheduler's iteration events, so occupancy, the prefill/decode split, queue
 * time and stalls are exact rather than scraped.
 */
public final class InProcessTarget implements Target {
    private final Engine engine;
    private final Scheduler scheduler;
    private final Tokenizer tokenizer;
    private final TargetInfo info;
    private final Recorder recorder = new Recorder();
    private final java.time.Duration requestTimeout;

    /**
     * Takes ownership of {@code engine} (closed with this target). A request not finished after
     * {@code requestTimeout} is cancelled and recorded as failed, so a stuck scheduler shows up in
     * the report instead of hanging the benchmark.
     */
    public InProcessTarget(Engine engine, SchedulerConfig config, String endpoint, java.time.Duration requestTimeout) {
        this(engine, config, endpoint, requestTimeout, 1024);
    }

    /**
     * @param sessionTokens the workload's mean session length (prompt + max tokens): the state bytes
     *                      per token are reported at that length, since some layouts are not linear
     */
    public InProcessTarget(Engine engine, SchedulerConfig config, String endpoint, java.time.Duration requestTimeout,
                           int sessionTokens) {
        this.engine = engine;
        this.requestTimeout = requestTimeout;
        SchedulerConfig cfg = config.maxBatchTokens() > engine.features().maxRows()
                ? config.withBatch(Math.min(config.maxBatchSessions(), engine.features().maxRows()), engine.features().maxRows())
                : config;
        this.scheduler = new Scheduler(engine, cfg);
        this.tokenizer = Tokenizer.fromMetadata(engine.info().metadata());
        var recipe = engine.recipe();
        var layout = engine.stateLayout();
        boolean mixed = engine.features().mixedPrefillDecode();
        int length = Math.max(1, Math.min(sessionTokens, recipe.contextLength()));
        StatePerToken perToken = StatePerToken.of(layout, length);
        this.info = new TargetInfo("in-process", endpoint, engine.info().name(), engine.info().architecture(),
                TargetInfo.laneOf(engine.info().architecture()), recipe.id(), recipe.artifactSha256(),
                engine.id().toString(), engine.info().vocabSize(), recipe.contextLength(), cfg.maxBatchSessions(),
                perToken.bytesPerToken(), cfg.stateBudgetBytes(), cfg.promptTokenWeight(),
                cfg.generatedTokenWeight(), cfg.decodeWaitBound(mixed), cfg.prefillWaitBound(mixed), cfg.fairness(),
                perToken.basis());
        scheduler.addListener(recorder);
        scheduler.start();
    }

    public SchedulerConfig schedulerConfig() { return scheduler.config(); }

    @Override
    public TargetInfo info() { return info; }

    @Override
    public RequestRecord send(long id, String level, String tenant, int client, RequestSpec spec, long origin)
            throws InterruptedException {
        int[] prompt = spec.promptIds() != null ? spec.promptIds() : tokenizer.encode(spec.promptText(), true, false);
        Stream stream = new Stream(origin);
        long start = System.nanoTime() - origin;
        Submission sub = scheduler.submit(new SessionRequest(tenant, prompt, GreedySampler.INSTANCE,
                StopConditions.maxTokens(spec.maxTokens()), null, null, stream));
        if (sub instanceof Submission.Rejected r) {
            long end = System.nanoTime() - origin;
            return new RequestRecord(id, level, tenant, client, spec.probe(), start, end, new long[0], -1, 0, 0, -1, -1,
                    "rejected", r.reason() + ": " + r.message());
        }
        var session = ((Submission.Accepted) sub).session();
        SessionEvent.Finished fin;
        try {
            fin = stream.done.get(requestTimeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (ExecutionException e) {
            throw new IllegalStateException(e.getCause());
        } catch (java.util.concurrent.TimeoutException e) {
            session.cancel("benchmark request timeout " + requestTimeout);
            long end = System.nanoTime() - origin;
            return new RequestRecord(id, level, tenant, client, spec.probe(), start, end, stream.times(), -1, 0,
                    stream.times().length, -1, -1, "timeout", "no end after " + requestTimeout + " (session "
                    + session.sequenceId() + ", phase " + session.phase() + ")");
        }
        long end = stream.endNanos;
        var acc = fin.accounting();
        long[] times = stream.times();
        String error = switch (fin.reason()) {
            case STOP, LENGTH -> null;
            default -> fin.reason().wireName() + ": " + fin.message();
        };
        return new RequestRecord(id, level, tenant, client, spec.probe(), start, end, times, acc.promptTokens(),
                acc.generatedTokens(), times.length, acc.queueNanos(), session.sequenceId(), fin.reason().wireName(),
                error);
    }

    /** Records token arrival times on the scheduler thread (cheap, never blocks). */
    private static final class Stream implements SessionListener {
        final long origin;
        final CompletableFuture<SessionEvent.Finished> done = new CompletableFuture<>();
        long[] times = new long[64];
        int n;
        volatile long endNanos;

        Stream(long origin) { this.origin = origin; }

        @Override
        public void onEvent(SessionEvent e) {
            long now = System.nanoTime() - origin;
            switch (e) {
                case SessionEvent.TokenEvent t -> add(now);
                case SessionEvent.Finished f -> {
                    endNanos = now;
                    done.complete(f);
                }
            }
        }

        private synchronized void add(long now) {
            if (n == times.length) times = java.util.Arrays.copyOf(times, n * 2);
            times[n++] = now;
        }

        synchronized long[] times() { return java.util.Arrays.copyOf(times, n); }
    }

    @Override
    public void beginLevel() { recorder.clear(); }

    @Override
    public ServerObservation endLevel(List<RequestRecord> records, long origin) throws InterruptedException {
        // The owner hears Finished just before the scheduler publishes SessionEnded, and a session's
        // end is published inside its last iteration, before that iteration's event: wait for both.
        long lastEnd = recorder.awaitEnded(records.stream().filter(r -> !"timeout".equals(r.finishReason()))
                .mapToLong(RequestRecord::sequenceId).filter(x -> x >= 0).toArray());
        recorder.awaitIteration(lastEnd);
        List<Recorder.Seen> seen = new ArrayList<>(recorder.iterations);
        seen.sort((a, b) -> Long.compare(a.event.iteration(), b.event.iteration()));
        List<IterationSample> samples = new ArrayList<>(seen.size());
        List<StallAnalyzer.Trace> traces = new ArrayList<>(seen.size());
        long rows = 0, prefill = 0, decode = 0, maxBytes = 0;
        double bytes = 0;
        for (Recorder.Seen s : seen) {
            var e = s.event;
            long end = s.nanos - origin;
            samples.add(new IterationSample(e.iteration(), end, e.sessions(), e.prefillChunks(), e.decodeRows(), e.tokens(),
                    e.forwardNanos(), e.overheadNanos(), e.stateBytesInUse(), e.running(), e.waiting()));
            traces.add(new StallAnalyzer.Trace(e.iteration(), end, e.forwardNanos() + e.overheadNanos(),
                    e.prefillSessions(), e.decodeSessions()));
            rows += e.sessions();
            prefill += e.prefillChunks();
            decode += e.decodeRows();
            bytes += e.stateBytesInUse();
            maxBytes = Math.max(maxBytes, e.stateBytesInUse());
        }
        Map<Long, Long> admitted = new HashMap<>(recorder.admittedAt);
        int n = samples.size();
        double[] queue = records.stream().filter(r -> r.queueNanos() >= 0).mapToDouble(r -> r.queueNanos() / 1e6).toArray();
        Double meanRows = n == 0 ? null : (double) rows / n;
        return new ServerObservation("scheduler events", samples, meanRows,
                meanRows == null ? null : meanRows / info.rowLimit(), rows == 0 ? null : (double) prefill / rows,
                rows == 0 ? null : (double) decode / rows, Summary.of(queue), "scheduler accounting (exact)",
                n == 0 ? null : bytes / n, n == 0 ? null : maxBytes, info.stateBudgetBytes(), null,
                StallAnalyzer.analyze(traces, admitted));
    }

    /** Collects scheduler events of the current level. */
    private static final class Recorder implements SchedulerListener {
        record Seen(SchedulerEvent.IterationEvent event, long nanos) {}

        final ConcurrentLinkedQueue<Seen> iterations = new ConcurrentLinkedQueue<>();
        final Map<Long, Long> admittedAt = new ConcurrentHashMap<>();
        final Map<Long, Long> endedAt = new ConcurrentHashMap<>();
        private final Object lock = new Object();
        private long lastIteration = -1;

        @Override
        public void onEvent(SchedulerEvent e) {
            switch (e) {
                case SchedulerEvent.IterationEvent it -> {
                    iterations.add(new Seen(it, System.nanoTime()));
                    synchronized (lock) {
                        lastIteration = it.iteration();
                        lock.notifyAll();
                    }
                }
                case SchedulerEvent.SessionAdmitted a -> admittedAt.put(a.sequenceId(), a.iteration());
                case SchedulerEvent.SessionEnded end -> {
                    synchronized (lock) {
                        endedAt.put(end.sequenceId(), end.iteration());
                        lock.notifyAll();
                    }
                }
                case SchedulerEvent.SessionRejected r -> { }
            }
        }

        void clear() {
            iterations.clear();
            admittedAt.clear();
            endedAt.clear();
        }

        /** Waits (bounded) until every session has ended; returns the last iteration one ended in. */
        long awaitEnded(long[] sequenceIds) throws InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            long last = -1;
            synchronized (lock) {
                for (long seq : sequenceIds) {
                    Long it;
                    while ((it = endedAt.get(seq)) == null) {
                        long left = deadline - System.nanoTime();
                        if (left <= 0) throw new IllegalStateException("session " + seq + " never reported its end");
                        TimeUnit.NANOSECONDS.timedWait(lock, left);
                    }
                    last = Math.max(last, it);
                }
            }
            return last;
        }

        /** Waits (bounded) until the event of iteration {@code it} has arrived. */
        void awaitIteration(long it) throws InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            synchronized (lock) {
                while (lastIteration < it) {
                    long left = deadline - System.nanoTime();
                    if (left <= 0) throw new IllegalStateException("iteration " + it + " never reported");
                    TimeUnit.NANOSECONDS.timedWait(lock, left);
                }
            }
        }
    }

    @Override
    public void close() {
        scheduler.close();
        engine.close();
    }
}
