package dgr.runtime;

import dgr.engine.Batch;
import dgr.engine.ForwardResult;

/**
 * A head scheduler's side of its route: which session each batch row belongs to, the tokens the
 * last stage sampled, and the session opens and closes that travel down. Scheduler thread only.
 */
final class HeadRoute {
    private static final System.Logger LOG = System.getLogger(HeadRoute.class.getName());

    private final Downstream downstream;
    private final long[] rowSessions;
    private final int[] rowTokens;

    HeadRoute(Downstream downstream, int maxBatchTokens) {
        this.downstream = downstream;
        this.rowSessions = new long[maxBatchTokens];
        this.rowTokens = new int[maxBatchTokens];
    }

    void open(Session s) { downstream.open(s.sequenceId(), s.sampler()); }

    /** Sends the planned batch's boundary rows down and waits for its tokens. */
    void send(BatchPlanner planner, Batch batch, ForwardResult result) {
        for (int i = 0, row = 0; i < planner.count(); i++) {
            for (int c = 0; c < planner.chunk(i); c++) rowSessions[row++] = planner.sequenceId(i);
        }
        downstream.forward(batch, result, rowSessions, rowTokens);
    }

    /** The token the last stage sampled for batch row {@code row}. */
    int token(int row) { return rowTokens[row]; }

    /** Frees the session down the route; a failure here is logged, never thrown into the loop. */
    void close(Session s, Phase phase, String message) {
        try {
            downstream.close(s.sequenceId(), phase, message);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "closing session " + s.sequenceId() + " down the route failed", e);
        }
    }
}
