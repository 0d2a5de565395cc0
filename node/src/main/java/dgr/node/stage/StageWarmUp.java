package dgr.node.stage;

import dgr.engine.Batch;
import dgr.engine.Engine;
import dgr.engine.StateSlot;
import java.util.SplittableRandom;

/**
 * Compiles a later stage's kernels before it listens, for the shapes a failover gives it. An
 * alternate stage gets no rows until a stage dies; then its first work is a replay: full batches of
 * several sessions' prompt and generated rows. A warm-up of two 4-row passes left those shapes to the
 * Vector API's interpreted fallback: on llama-1b the first replay batch took 3.4 s and the third
 * 0.34 s (load 16), most of a client's pause. So this runs rounds of a full batch (two sessions'
 * rows, as a replay has) followed by decode passes (one row each of four sessions), until the full
 * pass stops getting faster (compiled) or a time budget is spent.
 *
 * <p>The rows are pseudo-random, not zeros: kernels compiled on zeros take branches real rows do not
 * and are compiled again on the first real batch. Every pass uses private slots closed afterwards,
 * so nothing of it remains (batch invariance).
 */
final class StageWarmUp {
    private static final System.Logger LOG = System.getLogger(StageWarmUp.class.getName());
    /** Rounds at least and at most, and the time after which no round starts. */
    private static final int MIN_ROUNDS = 3, MAX_ROUNDS = 12;
    private static final long BUDGET_NANOS = 30_000_000_000L;
    /** A round's full pass no faster than this share of the best so far: compiled, stop. */
    private static final double SETTLED = 0.9;
    private static final int DECODE_SESSIONS = 4, DECODE_PASSES = 3;

    private StageWarmUp() {}

    static void run(Engine engine) {
        int width = engine.boundarySchema().rowWidth(), maxRows = engine.features().maxRows();
        boolean last = engine.recipe().isLastStage();
        Batch batch = new Batch(maxRows, width);
        float[] rows = new float[maxRows * width];
        SplittableRandom random = new SplittableRandom(23);
        for (int i = 0; i < rows.length; i++) rows[i] = (float) random.nextGaussian();
        long start = System.nanoTime(), best = Long.MAX_VALUE, first = -1, lastPass = -1;
        int round = 0;
        while (round < MAX_ROUNDS && System.nanoTime() - start < BUDGET_NANOS) {
            long pass = round(engine, batch, rows, maxRows, width, last);
            if (pass < 0) break;  // the context is too short for a full batch: the decode shapes were warmed
            round++;
            if (first < 0) first = pass;
            lastPass = pass;
            boolean settled = round >= MIN_ROUNDS && pass > SETTLED * best;
            best = Math.min(best, pass);
            if (settled) break;
        }
        LOG.log(System.Logger.Level.INFO, String.format("stage warm-up: %d rounds in %d ms; a pass of %d rows took %d ms at first, %d ms at last",
                round, (System.nanoTime() - start) / 1_000_000, maxRows, first / 1_000_000, lastPass / 1_000_000));
    }

    /** One round; returns the full pass's nanoseconds, or -1 when the context cannot hold it. */
    private static long round(Engine engine, Batch batch, float[] rows, int maxRows, int width, boolean last) {
        StateSlot[] slots = new StateSlot[DECODE_SESSIONS];
        try {
            for (int s = 0; s < slots.length; s++) slots[s] = engine.openSlot();
            int capacity = slots[0].capacity();
            // The full pass: the rows of two sessions (one when the batch takes a single row).
            int sessions = Math.min(2, maxRows), each = maxRows / sessions;
            long t = -1;
            if (each + DECODE_PASSES <= capacity) {
                batch.clear();
                for (int s = 0; s < sessions; s++) add(batch, slots[s], 0, each, rows, s * each, width, last);
                long t0 = System.nanoTime();
                engine.forward(batch);
                t = System.nanoTime() - t0;
            }
            // Decode: one row of each session per pass.
            int decode = Math.min(DECODE_SESSIONS, maxRows);
            for (int p = 0; p < DECODE_PASSES; p++) {
                batch.clear();
                for (int s = 0; s < decode; s++) {
                    int pos = slots[s].length();
                    if (pos + 1 > capacity) return t;
                    add(batch, slots[s], pos, 1, rows, (s + p) % maxRows, width, last);
                }
                engine.forward(batch);
            }
            return t;
        } finally {
            for (StateSlot s : slots) if (s != null) s.close();
        }
    }

    /** {@code count} rows of one session from {@code position}, the boundary rows from {@code rows[row * width..]}. */
    private static void add(Batch batch, StateSlot slot, int position, int count, float[] rows, int row, int width, boolean last) {
        for (int i = 0; i < count; i++) batch.addBoundary(slot, position + i, rows, (row + i) * width, !last || i == count - 1);
    }
}
