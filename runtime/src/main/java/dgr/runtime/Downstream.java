package dgr.runtime;

import dgr.engine.Batch;
import dgr.engine.ForwardResult;
import dgr.engine.sampler.TokenSampler;

/**
 * The rest of a route behind a head: the stages that run the layers after the head's span and the
 * last one, which samples. The head's scheduler hands it the boundary rows its span produced and
 * gets back the token sampled for every row that wants output (DESIGN.md, "Across nodes").
 *
 * <p>Called only on the scheduler thread. A failure it cannot recover from (a dead stage with no
 * alternate) is thrown as a {@link RuntimeException} whose message says which stage and why; the
 * scheduler then fails the batch's sessions with that message.
 */
public interface Downstream {
    /** A session was admitted on the head: open it down the route with its sampler's settings. */
    void open(long sequenceId, TokenSampler sampler);

    /**
     * Sends the batch's rows down the route, {@code boundary} holding the head span's output of every
     * row, and waits for the tokens: {@code tokens[row]} for each row that wants output.
     *
     * @param rowSessions the sequence id of each batch row
     */
    void forward(Batch batch, ForwardResult boundary, long[] rowSessions, int[] tokens);

    /** The session ended on the head ({@code phase} FINISHED, CANCELLED or FAILED): free it everywhere. */
    void close(long sequenceId, Phase phase, String reason);
}
