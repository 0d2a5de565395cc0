package dgr.runtime;

import dgr.engine.Batch;
import dgr.engine.ForwardResult;
import dgr.engine.sampler.TokenSampler;

/**
 * The rest of a route behind a head: the stages that run the layers after the head's span and the
 * last one, which samples. The head's scheduler hands it the boundary rows its span produced and
 * later receives the token sampled for every row that wants output (DESIGN.md, "Across nodes").
 *
 * <p>Sending does not wait: the head keeps up to {@link #depth()} micro-batches (of different
 * sessions) on the route, so every stage computes at once. Called only on the scheduler thread,
 * except {@link #wake()}. A session the route cannot serve any more (a dead stage with no alternate)
 * comes back through {@link Replies#lost} with a message saying which stage and why; a failure of a
 * whole send is thrown as a {@link RuntimeException}.
 */
public interface Downstream {
    /** Where the replies of {@link #receive} go, on the scheduler thread. */
    interface Replies {
        void token(long sequenceId, int token);

        void lost(long sequenceId, String why);
    }

    /** Micro-batches the head keeps on the route: the number of stages, so each has one to compute. */
    int depth();

    /** A session was admitted on the head: open it down the route with its sampler's settings. */
    void open(long sequenceId, TokenSampler sampler);

    /**
     * Sends the batch's rows down the route, {@code boundary} holding the head span's output of every
     * row; returns without waiting. Each row that wants output brings one token back through {@link #receive}.
     *
     * @param rowSessions the sequence id of each batch row
     */
    void send(Batch batch, ForwardResult boundary, long[] rowSessions);

    /** Hands over the replies that have come, waiting up to {@code timeoutNanos} for the first one (0: none). */
    void receive(long timeoutNanos, Replies replies);

    /**
     * Whether something has come that {@link #receive} would hand over without waiting. A reply wakes
     * the head's rested workers as it comes; the scheduler rests them before it waits, and asks this
     * after, so a reply that came just before the rest still finds them awake.
     */
    default boolean replied() { return false; }

    /** Ends a wait in {@link #receive} early (a submission or cancel came); any thread. */
    void wake();

    /** The session ended on the head ({@code phase} FINISHED, CANCELLED or FAILED): free it everywhere. */
    void close(long sequenceId, Phase phase, String reason);

    /**
     * Whether a session whose token just came should get no next row yet: a failover's replay is still
     * computing other moved sessions' rows on the replacement, and this session's next rows would take the
     * cores (of every stage, on one machine) that the replay needs, so the last of them would wait longer.
     * Asked after each token and again while the answer is yes; a hold must end by itself (a bound).
     */
    default boolean holds(long sequenceId) { return false; }

    /** Positions of the session the route computed again after a stage failed (its dead span's work redone). */
    default int recomputedTokens(long sequenceId) { return 0; }
}
