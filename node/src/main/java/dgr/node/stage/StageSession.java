package dgr.node.stage;

import dgr.engine.StateSlot;
import dgr.engine.sampler.LogitBias;
import dgr.engine.sampler.Sampler;
import dgr.engine.sampler.SamplerConfig;
import java.util.List;

/** One session on a stage that is not first: its state slot, its upstream stream, and on the last stage its sampler. */
final class StageSession {
    final String id;
    final StateSlot slot;
    UpLink up;
    /** When its upstream stream ended (System.nanoTime), or -1 while attached. */
    long orphanedAt = -1;
    /** Rows of this session in the batch being formed. */
    int plannedRows;
    /** Last stage: the session's sampler, and the last token it sampled with its position (re-sent after a failover). */
    Sampler sampler;
    int cachedPosition = -1, cachedToken;

    StageSession(String id, StateSlot slot) {
        this.id = id;
        this.slot = slot;
    }

    /**
     * A sampler that has made the draws of {@code generated} already: the tokens are recorded as
     * recent and the draw counter set past them, so the next draw is the one the session would have made.
     */
    void resetSampler(SamplerConfig config, LogitBias bias, int vocabSize, List<Integer> generated) {
        sampler = new Sampler(config, bias, vocabSize);
        for (int t : generated) sampler.accept(t);
        sampler.skipTo(generated.size());
    }
}
