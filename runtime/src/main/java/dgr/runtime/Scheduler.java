package dgr.runtime;

import dgr.engine.Batch;
import dgr.engine.Engine;
import dgr.engine.ForwardResult;
import dgr.engine.StateSlot;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * The continuous-batching loop of one engine instance (DESIGN.md, "The scheduler"). Each iteration:
 * take new submissions, end cancelled and expired sessions, admit waiting sessions that fit the
 * state budget in fairness order, plan one batch of one compatibility key, run it, hand each row's
 * output to its session's own sampler, stream tokens, free what ended.
 *
 * <p>Threads: {@link #submit}, {@link Session#cancel} and the getters are safe from any thread; the
 * loop runs on its own platform thread after {@link #start()}. A driver that wants deterministic
 * steps (tests, the benchmark's replay mode) may instead call {@link #runIteration()} itself and
 * never start the thread. Several schedulers (one per engine, each with its own budget) may run side
 * by side; none shares state with another.
 */
public final class Scheduler implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(Scheduler.class.getName());
    /** Pause after an iteration that threw, so a persistent bug logs at a bounded rate, never parks for good. */
    private static final long FAILURE_BACKOFF_NANOS = 1_000_000;

    private final Engine engine;
    private final SchedulerConfig config;
    private final RequestCheck check;
    private final CompatibilityKey prefillKey;
    private final CompatibilityKey decodeKey;
    private final CompatibilityKey mixedKey;
    private final Batch batch;
    private final BatchPlanner planner;
    private final TenantLedger tenants;
    private final ArrayList<Session> running = new ArrayList<>();
    private final ConcurrentLinkedQueue<Session> inbox = new ConcurrentLinkedQueue<>();
    private final CopyOnWriteArrayList<SchedulerListener> listeners = new CopyOnWriteArrayList<>();
    private final AtomicLong nextSequenceId = new AtomicLong(1);
    /** Sessions submitted and not yet admitted or ended (inbox + waiting), for the queue bound. */
    private final AtomicInteger queued = new AtomicInteger();
    private final SchedulerTally tally = new SchedulerTally();
    private final Runnable onCancel = this::onCancel;
    /** The stages after this head's span, or null when the engine runs the whole model. */
    private final HeadRoute route;

    private volatile boolean closed;
    /** Set by {@link Session#cancel}; taken with getAndSet so a cancel arriving during a scan is never lost. */
    private final AtomicBoolean cancelRequested = new AtomicBoolean();
    private volatile Thread thread;
    private volatile long iteration;
    private volatile long reservedBytes;
    private volatile long stateBytesInUse;
    private volatile int runningCount;
    private long nextWaitingDeadline = Long.MAX_VALUE;

    public Scheduler(Engine engine, SchedulerConfig config) { this(engine, config, null); }

    /**
     * A head's scheduler when {@code downstream} is given: the engine runs the route's first span,
     * the downstream the rest and the sampling. Without it the engine must run the whole model.
     */
    public Scheduler(Engine engine, SchedulerConfig config, Downstream downstream) {
        var recipe = engine.recipe();
        if (!recipe.isFirstStage() || recipe.isLastStage() == (downstream != null)) {
            // Sessions here take token ids in; later spans are driven by the stage transport.
            throw new IllegalArgumentException("the scheduler drives a whole model, or a head with the rest of its route; "
                    + engine.id() + " runs layers [" + recipe.firstLayer() + ", " + recipe.endLayer() + ") of "
                    + recipe.nLayers() + (downstream == null ? " and has no route" : " and was given a route"));
        }
        this.route = downstream == null ? null : new HeadRoute(downstream, engine, config.maxBatchTokens());
        if (config.maxBatchTokens() > engine.features().maxRows()) {
            throw new IllegalArgumentException("maxBatchTokens " + config.maxBatchTokens() + " exceeds engine "
                    + engine.id() + " maxRows " + engine.features().maxRows());
        }
        this.engine = engine;
        this.config = config;
        this.check = new RequestCheck(engine.info().vocabSize(), recipe.contextLength(), engine.stateLayout(),
                config.stateBudgetBytes());
        boolean mixedEngine = engine.features().mixedPrefillDecode();
        this.prefillKey = CompatibilityKey.of(engine, Phase.PREFILL);
        this.decodeKey = CompatibilityKey.of(engine, Phase.DECODE);
        this.mixedKey = mixedEngine ? CompatibilityKey.of(engine, PhaseClass.MIXED) : null;
        this.batch = new Batch(config.maxBatchTokens(), engine.boundarySchema().rowWidth());
        this.planner = new BatchPlanner(config, mixedEngine);
        this.tenants = new TenantLedger(config.fairness(), config.promptTokenWeight(), config.generatedTokenWeight());
    }

    public Engine engine() { return engine; }
    public SchedulerConfig config() { return config; }

    public void addListener(SchedulerListener l) { listeners.add(l); }
    public void removeListener(SchedulerListener l) { listeners.remove(l); }

    /** Starts the loop on its own platform thread (the forward pass is CPU-bound; no virtual thread). */
    public synchronized Scheduler start() {
        if (thread != null) throw new IllegalStateException("already started");
        if (closed) throw new IllegalStateException("closed");
        Thread t = Thread.ofPlatform().name("dgr-scheduler-" + engine.id() + "-" + engine.recipe().id())
                .daemon(true).unstarted(this::loop);
        thread = t;
        t.start();
        return this;
    }

    /**
     * Submits a session. Accepted sessions wait for admission; refusals allocate nothing and say why
     * (a full waiting queue is {@link RejectReason#OVER_CAPACITY}).
     */
    public Submission submit(SessionRequest request) {
        long now = System.nanoTime();
        tally.submitted();
        if (closed) return reject(request, RejectReason.CLOSED, "scheduler for " + engine.id() + " is closed");
        Submission.Rejected refusal = check.refusal(request);
        if (refusal != null) return reject(request, refusal.reason(), refusal.message());
        if (queued.incrementAndGet() > config.maxWaitingSessions()) {
            queued.decrementAndGet();
            return reject(request, RejectReason.OVER_CAPACITY, "over capacity: " + config.maxWaitingSessions()
                    + " sessions already wait for " + engine.id() + "; retry later");
        }
        Session s = new Session(nextSequenceId.getAndIncrement(), request, now, check.reservationBytes(request), onCancel);
        inbox.add(s);
        // close() sets closed and then drains the inbox: if it has already drained, this session
        // would wait forever, so whoever sees closed after adding drains too (each poll hands a
        // session to one caller, which ends it).
        if (closed) cancelInbox();
        else wake();
        return new Submission.Accepted(s);
    }

    private Submission reject(SessionRequest request, RejectReason reason, String message) {
        tally.rejected();
        publish(new SchedulerEvent.SessionRejected(request.tenant(), reason, message));
        return new Submission.Rejected(reason, message);
    }

    private void onCancel() {
        cancelRequested.set(true);
        wake();
    }

    private void wake() {
        Thread t = thread;
        if (t != null) LockSupport.unpark(t);
        if (route != null) route.wake();
    }

    private void loop() {
        while (!closed) {
            boolean worked;
            try {
                worked = runIteration();
            } catch (RuntimeException | Error e) {
                // A bug here must not stop serving everyone. Parking now would strand every running
                // and waiting session until some unrelated submit woke the loop (closed-loop clients
                // never do: they all wait for a Finished). End the batch in flight, whose state is
                // unknown, and go on after a short pause.
                LOG.log(System.Logger.Level.ERROR, "scheduler iteration " + iteration + " failed; running "
                        + running.size() + ", waiting " + tenants.waitingCount() + ", reserved " + reservedBytes, e);
                recover(e);
                LockSupport.parkNanos(this, FAILURE_BACKOFF_NANOS);
                continue;
            }
            // Park only when nothing at all is left to do: no running session (runIteration admits
            // whatever fits, and with nothing running everything fits), no new submission and no
            // cancel to apply. A submit or cancel after these checks unparks us (the permit).
            if (!worked && inbox.isEmpty() && !cancelRequested.get() && !closed) LockSupport.park(this);
        }
    }

    /** After an iteration threw: fails the sessions of the batch in flight and forgets the plan. */
    private void recover(Throwable e) {
        try {
            String message = "scheduler iteration failed: " + e;
            for (int i = 0; i < planner.count(); i++) {
                Session s = planner.session(i);
                if (s != null) end(s, Phase.FAILED, FinishReason.ERROR, message);
            }
            removeEnded();
            planner.release();
            publishGauges();
        } catch (RuntimeException | Error again) {
            LOG.log(System.Logger.Level.ERROR, "scheduler recovery failed", again);
        }
    }

    /**
     * Runs one iteration. Returns false when there was nothing to run (no running session after
     * admission). Call only from one thread, and not while the loop thread is started.
     */
    public boolean runIteration() {
        long t0 = System.nanoTime();
        ingest();
        endCancelled(t0);
        admit(t0);
        if (running.isEmpty()) {
            if (tenants.waitingCount() > 0) {
                // With nothing running nothing is reserved, and submit refused every session that
                // could never fit, so the head must have fit. Returning false here would park the
                // loop for good with sessions waiting: repair the books loudly and admit again.
                LOG.log(System.Logger.Level.ERROR, "nothing runs but " + reservedBytes
                        + " state bytes are still reserved and " + tenants.waitingCount()
                        + " sessions wait; resetting the reservation");
                reservedBytes = 0;
                admit(t0);
            }
            if (running.isEmpty()) {
                publishGauges();
                return false;
            }
        }
        if (route != null) {
            // Tokens that came back from the route; waits only when nothing else can be planned.
            route.receive(running, (s, token) -> emit(s, token, System.nanoTime()),
                    (s, why) -> end(s, Phase.FAILED, FinishReason.UNAVAILABLE, why));
            removeEnded();
        }
        BatchPlanner.Kind kind = route == null ? planner.plan(running, batch)
                : planner.plan(running, batch, route.groupSize(running.size()));
        if (kind == null) {  // a head whose every session awaits the route: the next iteration waits for replies
            publishGauges();
            return true;
        }
        CompatibilityKey key = switch (kind) {
            case MIXED -> mixedKey;
            case PREFILL -> mixedKey != null ? mixedKey : prefillKey;
            case DECODE -> mixedKey != null ? mixedKey : decodeKey;
        };
        long t1 = System.nanoTime();
        ForwardResult result;
        try {
            result = engine.forward(batch);
            if (route != null) route.send(planner, batch, result);
        } catch (RuntimeException | Error e) {
            long t2 = System.nanoTime();
            failBatch(e);
            finishIteration(key, t1, t2, t0);
            return true;
        }
        long t2 = System.nanoTime();
        handOut(result, t2);
        finishIteration(key, t1, t2, t0);
        return true;
    }

    private void ingest() {
        Session s;
        while ((s = inbox.poll()) != null) {
            tenants.enqueue(s);
            if (s.deadlineNanos() < nextWaitingDeadline) nextWaitingDeadline = s.deadlineNanos();
        }
    }

    private void endCancelled(long now) {
        // Taken before scanning: a cancel arriving during the scan sets it again for next time.
        boolean scanWaiting = cancelRequested.getAndSet(false);
        for (int i = 0; i < running.size(); i++) {
            Session s = running.get(i);
            String why = cancelReason(s, now);
            if (why != null) end(s, Phase.CANCELLED, FinishReason.CANCELLED, why);
        }
        removeEnded();
        if (tenants.waitingCount() > 0 && (scanWaiting || now - nextWaitingDeadline >= 0)) {
            long[] earliest = {Long.MAX_VALUE};
            tenants.removeWaiting(s -> {
                if (cancelReason(s, now) != null) return true;
                earliest[0] = Math.min(earliest[0], s.deadlineNanos());
                return false;
            }, s -> {
                queued.decrementAndGet();
                end(s, Phase.CANCELLED, FinishReason.CANCELLED, cancelReason(s, now));
            });
            nextWaitingDeadline = earliest[0];
        }
    }

    private static String cancelReason(Session s, long now) {
        String why = s.cancelRequest();
        if (why != null) return why;
        return s.deadlinePassed(now) ? "deadline exceeded" : null;
    }

    private void admit(long now) {
        while (running.size() < config.maxBatchSessions()) {
            Session s = tenants.peekNext();
            if (s == null) return;
            // Head of line: if the fairest next session does not fit, admit nobody behind it, so a
            // large session cannot be starved by a stream of small ones.
            if (reservedBytes + s.reservationBytes() > config.stateBudgetBytes()) return;
            StateSlot slot = null;
            try {
                slot = engine.openSlot();
                if (route != null) route.open(s);
            } catch (RuntimeException | Error e) {
                // The session leaves the queue all the same, ending FAILED: its owner hears why, it holds
                // nothing, and the sessions behind it get their turn. A dead route is no fault here: no trace.
                tenants.dropNext(s);
                queued.decrementAndGet();
                if (slot != null) slot.close();
                String message = "admission failed: engine " + engine.id() + " could not open the session: " + e;
                LOG.log(System.Logger.Level.WARNING, message + " (session " + s.sequenceId() + ")", e instanceof RouteUnavailableException ? null : e);
                end(s, Phase.FAILED, e instanceof RouteUnavailableException ? FinishReason.UNAVAILABLE : FinishReason.ERROR, message);
                continue;
            }
            tenants.admit(s);
            queued.decrementAndGet();
            s.slot = slot;
            s.admitted = true;
            s.admittedNanos = now;
            s.waitedIterations = 0;
            reservedBytes += s.reservationBytes();
            running.add(s);
            tally.admitted();
            publish(new SchedulerEvent.SessionAdmitted(s.sequenceId(), s.tenant(), iteration, now - s.submittedNanos(),
                    s.reservationBytes()));
        }
    }

    private void handOut(ForwardResult result, long now) {
        float[] out = result.outputArray();
        int width = result.outputWidth();
        for (int i = 0; i < planner.count(); i++) {
            Session s = planner.session(i);
            int chunk = planner.chunk(i);
            s.waitedIterations = 0;
            s.servedIteration = iteration;
            boolean decodeRow = s.phase() == Phase.DECODE;
            if (!decodeRow) {
                s.promptProcessed += chunk;
                tenants.chargePrompt(s, chunk);
                if (s.promptProcessed < s.promptLength()) {
                    s.syncPosition();
                    continue;
                }
                s.setPhase(Phase.DECODE);
            }
            // A head's session is in flight now: its token comes from the last stage (route.receive).
            if (route != null) continue;
            int token;
            try {
                token = s.sampler().sample(out, result.outputOffset(planner.outputRow(i)), width);
            } catch (RuntimeException e) {
                s.syncPosition();
                end(s, Phase.FAILED, FinishReason.ERROR, "sampler failed: " + e);
                continue;
            }
            emit(s, token, now);
        }
        // Sessions that had no rows this iteration waited one more.
        countWaits();
        removeEnded();
    }

    private void countWaits() {
        for (int i = 0; i < running.size(); i++) {
            Session s = running.get(i);
            if (s.servedIteration != iteration) s.waitedIterations++;
        }
    }

    private void emit(Session s, int token, long now) {
        s.recordToken(now);
        s.lastToken = token;
        s.syncPosition();
        tenants.chargeGenerated(s);
        var stop = s.stopConditions();
        boolean end = stop.isEndToken(token);
        String text = "";
        if (!end && s.decoder() != null) {
            try {
                text = s.stopMatcher().push(s.decoder().push(token));
            } catch (RuntimeException e) {
                end(s, Phase.FAILED, FinishReason.ERROR, "text decoder failed: " + e);
                return;
            }
        }
        FinishReason reason = null;
        if (end || s.stopMatcher().stopped()) reason = FinishReason.STOP;
        else if (s.generated == stop.maxTokens()) {
            reason = FinishReason.LENGTH;
            text += s.stopMatcher().flush();
        }
        if (!deliver(s, new SessionEvent.TokenEvent(s.generated - 1, token, text))) return;
        if (reason != null) end(s, Phase.FINISHED, reason, "");
    }

    /** Delivers to the owner; a throwing listener means the owner is gone, so the session is cancelled. */
    private static boolean deliver(Session s, SessionEvent e) {
        try {
            s.listener().onEvent(e);
            return true;
        } catch (RuntimeException ex) {
            if (e instanceof SessionEvent.TokenEvent) s.cancel("stream listener failed: " + ex);
            else LOG.log(System.Logger.Level.WARNING, "stream listener of session " + s.sequenceId()
                    + " failed on its end", ex);
            return false;
        }
    }

    private void failBatch(Throwable e) {
        boolean routeLost = e instanceof RouteUnavailableException;
        String message = routeLost ? e.getMessage() : "engine " + engine.id() + " failed: " + e;
        LOG.log(System.Logger.Level.WARNING, message, routeLost ? null : e);
        for (int i = 0; i < planner.count(); i++) {
            Session s = planner.session(i);
            s.servedIteration = iteration;
            // The engine may have written part of the batch: the slot is not trusted again.
            end(s, Phase.FAILED, routeLost ? FinishReason.UNAVAILABLE : FinishReason.ERROR, message);
        }
        removeEnded();
        countWaits();
    }

    /** Ends a session: frees its slot and reservation, streams Finished, reports it. Idempotent. */
    private void end(Session s, Phase phase, FinishReason reason, String message) {
        if (s.phase().isTerminal()) return;
        s.setPhase(phase);
        StateSlot slot = s.slot;
        s.slot = null;
        if (slot != null) {
            try {
                slot.close();
            } catch (RuntimeException e) {
                // The reservation must come back whatever the slot did, or admission shrinks for good.
                LOG.log(System.Logger.Level.WARNING, "closing the state slot of session " + s.sequenceId() + " failed", e);
            }
        }
        if (s.admitted) reservedBytes -= s.reservationBytes();
        if (s.admitted && route != null) route.close(s, phase, message);
        tenants.ended(s);
        // Before the owner hears of the end, so whoever awaits it sees the freed bytes.
        publishGauges();
        finish(s, phase, reason, message);
    }

    /** The owner-facing half of an end: counters, Finished, completion, SessionEnded. */
    private void finish(Session s, Phase phase, FinishReason reason, String message) {
        tally.ended(phase);
        Accounting acc = s.accounting();
        var fin = new SessionEvent.Finished(reason, message, acc);
        deliver(s, fin);
        s.complete(fin);
        publish(new SchedulerEvent.SessionEnded(s.sequenceId(), s.tenant(), iteration, phase, reason, message, acc));
    }

    private void removeEnded() {
        int w = 0;
        for (int r = 0; r < running.size(); r++) {
            Session s = running.get(r);
            if (!s.phase().isTerminal()) running.set(w++, s);
        }
        for (int r = running.size() - 1; r >= w; r--) running.remove(r);
    }

    private void finishIteration(CompatibilityKey key, long t1, long t2, long t0) {
        long bytes = publishGauges();
        long t3 = System.nanoTime();
        long it = iteration;
        if (!listeners.isEmpty()) {
            long[] prefillIds = planner.sequenceIds(false);
            long[] decodeIds = planner.sequenceIds(true);
            publish(new SchedulerEvent.IterationEvent(it, key, planner.count(), planner.prefillCount(),
                    planner.decodeCount(), planner.tokens(), t2 - t1, (t1 - t0) + (t3 - t2), bytes, reservedBytes,
                    config.stateBudgetBytes(), running.size(), tenants.waitingCount() + inbox.size(), prefillIds,
                    decodeIds));
        }
        planner.release();
        iteration = it + 1;
    }

    /** Recomputes the gauges other threads read; ended sessions (slot already closed) are skipped. */
    private long publishGauges() {
        long bytes = 0;
        int n = 0;
        for (int i = 0; i < running.size(); i++) {
            Session s = running.get(i);
            if (s.slot == null) continue;
            bytes += s.slot.bytes();
            n++;
        }
        stateBytesInUse = bytes;
        runningCount = n;
        return bytes;
    }

    private void publish(SchedulerEvent e) {
        for (SchedulerListener l : listeners) {
            try {
                l.onEvent(e);
            } catch (RuntimeException ex) {
                LOG.log(System.Logger.Level.WARNING, "scheduler listener failed on " + e.getClass().getSimpleName(), ex);
            }
        }
    }

    /** Iterations run so far. */
    public long iteration() { return iteration; }
    /** Bytes held by running sessions' state slots (as of the last iteration). */
    public long stateBytesInUse() { return stateBytesInUse; }

    /** Bytes reserved for running sessions. */
    public long reservedBytes() { return reservedBytes; }

    public int runningCount() { return runningCount; }

    /** Sessions submitted and not yet admitted. */
    public int waitingCount() { return queued.get(); }

    public SchedulerCounters counters() {
        return tally.snapshot(iteration);
    }

    /** Real weighted service per tenant ({@code promptTokenWeight × prompt + generatedTokenWeight × generated}). */
    public Map<String, Long> tenantService() { return tenants.serviceSnapshot(); }

    /**
     * Stops the loop and cancels every session still waiting or running ("scheduler closed"), freeing
     * their slots. Does not close the engine: whoever built it owns it.
     */
    @Override
    public void close() {
        Thread t;
        synchronized (this) {
            if (closed) return;
            closed = true;
            t = thread;
        }
        if (t != null) {
            LockSupport.unpark(t);
            boolean interrupted = false;
            while (t.isAlive()) {
                try {
                    t.join();
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
            if (interrupted) Thread.currentThread().interrupt();
        }
        List<Session> all = new ArrayList<>(running);
        for (Session s : all) end(s, Phase.CANCELLED, FinishReason.CANCELLED, "scheduler closed");
        removeEnded();
        tenants.removeWaiting(s -> true, s -> {
            queued.decrementAndGet();
            end(s, Phase.CANCELLED, FinishReason.CANCELLED, "scheduler closed");
        });
        publishGauges();
        cancelInbox();
    }

    /** Ends a closed scheduler's inbox: never ingested, they hold nothing; each poll hands one to one caller. */
    private void cancelInbox() {
        Session s;
        while ((s = inbox.poll()) != null) {
            queued.decrementAndGet();
            s.setPhase(Phase.CANCELLED);
            finish(s, Phase.CANCELLED, FinishReason.CANCELLED, "scheduler closed");
        }
    }
}
