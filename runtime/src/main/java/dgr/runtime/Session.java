package dgr.runtime;

import dgr.engine.sampler.TokenSampler;
import dgr.engine.StateSlot;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;

/**
 * One generation on one engine: sequence id, tenant, prompt, position, state slot, phase, sampler,
 * stop conditions, stream and accounting. Created by {@link Scheduler#submit}; its mutable state is
 * changed only by the scheduler thread. Other threads may read {@link #phase()} and
 * {@link #position()}, call {@link #cancel}, and wait on {@link #completion()}.
 */
public final class Session {
    private final long sequenceId;
    private final String tenant;
    private final int[] prompt;
    private final TokenSampler sampler;
    private final StopConditions stop;
    private final TextDecoder decoder;
    private final StopMatcher stopMatcher;
    private final SessionListener listener;
    /** Continues a generation its client is already reading: admitted and prefilled first. */
    final boolean resumed;
    private final long submittedNanos;
    private final long deadlineNanos;
    private final long reservationBytes;
    private final Runnable wakeScheduler;
    private final CompletableFuture<SessionEvent.Finished> completion = new CompletableFuture<>();

    private volatile Phase phase = Phase.PREFILL;
    private volatile String cancelRequest;
    private volatile int position;

    // Scheduler-thread state.
    StateSlot slot;
    boolean admitted;
    int promptProcessed;
    int generated;
    int lastToken = -1;
    long admittedNanos = -1;
    long firstTokenNanos = -1;
    long lastTokenNanos;
    private long[] interTokenNanos = new long[16];
    /** Iterations since this session last had rows (or since admission). */
    int waitedIterations;
    /** The iteration in which this session last had rows. */
    long servedIteration = -1;
    /** On a head: the micro-batch whose token this session awaits from the route, or null. */
    HeadRoute.Flight inFlight;
    /** On a head: positions the route recomputed for this session after a stage failed. */
    int recomputedTokens;

    Session(long sequenceId, SessionRequest request, long submittedNanos, long reservationBytes,
            Runnable wakeScheduler) {
        this.sequenceId = sequenceId;
        this.tenant = request.tenant();
        this.prompt = request.prompt();
        this.sampler = request.sampler();
        this.stop = request.stop();
        this.decoder = request.decoder();
        this.stopMatcher = new StopMatcher(stop.stopStrings());
        this.listener = request.listener();
        this.resumed = request.resumed();
        this.submittedNanos = submittedNanos;
        this.deadlineNanos = request.timeout() == null ? Long.MAX_VALUE
                : submittedNanos + Math.max(0, request.timeout().toNanos());
        this.reservationBytes = reservationBytes;
        this.wakeScheduler = wakeScheduler;
    }

    public long sequenceId() { return sequenceId; }

    public String tenant() { return tenant; }

    public int promptLength() { return prompt.length; }

    public StopConditions stopConditions() { return stop; }

    public Phase phase() { return phase; }

    /** Positions processed so far (the length of its state slot). */
    public int position() { return position; }

    /** State bytes reserved for this session while it is admitted. */
    public long reservationBytes() { return reservationBytes; }

    /** Completes (never exceptionally) when the stream has ended; the {@code Finished} event again. */
    public CompletableFuture<SessionEvent.Finished> completion() { return completion; }

    /** Asks the scheduler to end this session at its next iteration (finish reason {@code cancelled}). */
    public void cancel() { cancel("cancelled by owner"); }

    public void cancel(String why) {
        if (cancelRequest == null) {
            cancelRequest = why;
            wakeScheduler.run();
        }
    }

    String cancelRequest() { return cancelRequest; }

    boolean deadlinePassed(long now) { return now - deadlineNanos >= 0 && deadlineNanos != Long.MAX_VALUE; }

    long deadlineNanos() { return deadlineNanos; }

    long submittedNanos() { return submittedNanos; }

    void setPhase(Phase p) { phase = p; }

    void syncPosition() { position = promptProcessed + Math.max(0, generated - 1); }

    int promptToken(int i) { return prompt[i]; }

    boolean inPrefill() { return phase == Phase.PREFILL; }

    TokenSampler sampler() { return sampler; }

    TextDecoder decoder() { return decoder; }

    StopMatcher stopMatcher() { return stopMatcher; }

    SessionListener listener() { return listener; }

    void recordToken(long now) {
        if (generated == 0) {
            firstTokenNanos = now;
        } else {
            if (generated - 1 == interTokenNanos.length) interTokenNanos = Arrays.copyOf(interTokenNanos, generated * 2);
            interTokenNanos[generated - 1] = now - lastTokenNanos;
        }
        lastTokenNanos = now;
        generated++;
    }

    /** Exact accounting so far; final once {@link #completion()} is done. */
    public Accounting accounting() {
        return new Accounting(prompt.length, promptProcessed, 0, generated,
                admittedNanos < 0 ? -1 : admittedNanos - submittedNanos,
                firstTokenNanos < 0 ? -1 : firstTokenNanos - submittedNanos,
                Arrays.copyOf(interTokenNanos, Math.max(0, generated - 1)), recomputedTokens);
    }

    void complete(SessionEvent.Finished finished) { completion.complete(finished); }

    @Override
    public String toString() {
        return "Session[" + sequenceId + ", tenant=" + tenant + ", " + phase + ", prompt " + promptProcessed + "/"
                + prompt.length + ", generated " + generated + "]";
    }
}
