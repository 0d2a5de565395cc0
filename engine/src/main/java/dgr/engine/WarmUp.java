package dgr.engine;

/**
 * Runs a few throw-away forward passes right after load so the JIT has compiled the kernels
 * before the first real request is timed. Until C2 compiles them, Vector API kernels run on
 * the API's Java fallback, tens of times slower: without this, the first prompt of a `dgr run`
 * reported about 1 tok/s on a model that decodes at 10. llama.cpp's tools do the same by
 * default (`--no-warmup` turns it off there).
 *
 * <p>The passes use a private state slot that is closed afterwards, so nothing of them remains:
 * results never depend on earlier batches (batch invariance), and the slot's pages go back to the
 * pool.
 */
public final class WarmUp {
    /** Sessions of a many-row decode pass, and the positions a warm-up session reaches before it starts again. */
    private static final int DECODE_SESSIONS = 4, DECODE_CONTEXT = 48;
    /**
     * Sessions whose prompt chunks fill a prompt pass (a serving batch takes several sessions' chunks), and the
     * chunks of one prompt (how far a warm-up prompt goes before it starts again).
     */
    private static final int PROMPT_SESSIONS = 3, PROMPT_CHUNKS = 4;
    /**
     * {@link #decode}'s default: calls in all (rows × the span's layers) of a helper each layer calls once per
     * row (about twice what C2 needs with the launcher's engine threshold, a tenth of the JVM's), and the
     * most time it may take (llama-1b on 2 vCPUs went quiet after 8.7 s, llama-tiny after 1.4 s).
     */
    static final int DECODE_CALLS = 1000;
    static final long DECODE_BUDGET_NANOS = 10_000_000_000L;
    /** Every this many passes a prompt pass instead of a decode pass (a round: the passes up to and including one). */
    private static final int PROMPT_EVERY = 8;
    /**
     * JIT compile time under which a round of passes counts as compiled: a JVM whose kernels and helpers are all
     * compiled spends a few milliseconds a second on recompilations, one still compiling the prompt path hundreds.
     */
    public static final long QUIET_JIT_MS = 20;

    private WarmUp() {}

    /**
     * Forward passes of 4, 2 and 1 rows (each kernel shape once per round, within the engine's row
     * limit) for {@code rounds} rounds. First-stage engines only; other stages are left as they are.
     */
    public static void run(Engine engine, int rounds) {
        if (!engine.recipe().isFirstStage()) return;
        int maxRows = engine.features().maxRows(), context = engine.recipe().contextLength();
        Batch batch = new Batch(maxRows, engine.boundarySchema().rowWidth());
        try (StateSlot slot = engine.openSlot()) {
            int pos = 0;
            for (int r = 0; r < rounds && pos + 7 <= context; r++) {
                for (int rows : new int[] {4, 2, 1}) {
                    int n = Math.min(rows, maxRows);
                    batch.clear();
                    for (int i = 0; i < n; i++) batch.addToken(slot, pos++, 0, i == n - 1);
                    engine.forward(batch);
                }
            }
        }
    }

    /** {@link #decode(Engine, int, int, long)} with its defaults and prompt chunks of {@code promptRows}; returns the passes run. */
    public static int decode(Engine engine, int promptRows) {
        return decode(engine, DECODE_CALLS, promptRows, DECODE_BUDGET_NANOS);
    }

    /**
     * Decode passes, alternately one row of each of 4 sessions and one row of one session (the shapes
     * of c=4..8 and c=1), every {@value #PROMPT_EVERY}th a prompt pass instead: chunks of up to {@code promptRows}
     * rows of up to three sessions, each prompt up to {@value #PROMPT_CHUNKS} chunks long, as the scheduler batches them. It
     * runs until the span's layers together have computed {@code layerCalls} rows (a helper called once per
     * row of each layer has run that often) and a round of passes found the JIT quiet (under
     * {@link #QUIET_JIT_MS} of compile time), or {@code budgetNanos} is spent; returns the passes run. Any
     * stage: a later one gets pseudo-random boundary rows (zeros take branches real rows do not), the first
     * pseudo-random tokens.
     *
     * <p>Why: {@link #run}'s few passes compile the matmul kernels (their loops are long), but the
     * helpers a layer calls once per row (norms, rope, residuals, attention's per-tile steps, several
     * written with the Vector API, which runs its slow Java fallback until C2 compiles the caller) reach
     * C2 only after a few thousand calls (a few hundred with the launcher's engine threshold). A stage
     * that serves half the layers calls them half as often per token as one node does: traced with
     * {@code -XX:+PrintCompilation} on a 2-stage llama-1b route at c=1, the head still compiled
     * {@code RowLanes.tileMax}, {@code Norms.block} and {@code LlamaEngine.preNorm} with C2 after 8
     * requests of 40 tokens, the later stage {@code preNorm} and {@code KvSlot.store}. And a prompt's
     * chunk takes paths a decode row does not (attention's runs of rows, the matrices' row tiles): with
     * prompt passes of 16 rows only, a one-node llama-1b server answered its first 128-token prompt in
     * 2.2 s and the next ones in 0.7-0.8 s.
     */
    public static int decode(Engine engine, int layerCalls, int promptRows, long budgetNanos) {
        int maxRows = engine.features().maxRows(), width = engine.boundarySchema().rowWidth();
        int layers = Math.max(1, engine.recipe().endLayer() - engine.recipe().firstLayer());
        boolean first = engine.recipe().isFirstStage();
        // A stage in the middle of a route hands every row on, so its stage worker asks output of every row.
        boolean every = !first && !engine.recipe().isLastStage();
        int vocab = engine.info().vocabSize(), sessions = Math.min(DECODE_SESSIONS, maxRows);
        java.util.SplittableRandom random = new java.util.SplittableRandom(23);
        float[] row = new float[width];
        Batch batch = new Batch(maxRows, width);
        StateSlot[] slots = new StateSlot[sessions + PROMPT_SESSIONS];
        var jit = java.lang.management.ManagementFactory.getCompilationMXBean();
        boolean timed = jit != null && jit.isCompilationTimeMonitoringSupported();
        long start = System.nanoTime(), roundJit = timed ? jit.getTotalCompilationTime() : 0;
        boolean quiet = !timed;
        int passes = 0;
        try {
            for (int s = 0; s < slots.length; s++) slots[s] = engine.openSlot();
            int capacity = slots[0].capacity(), context = Math.min(DECODE_CONTEXT, capacity);
            int chunk = Math.max(1, Math.min(Math.min(promptRows, maxRows), capacity));
            int promptContext = Math.min(Math.max(PROMPT_CHUNKS * chunk, 2 * maxRows), capacity);
            for (long done = 0; (done < (long) layerCalls || !quiet) && System.nanoTime() - start < budgetNanos; passes++) {
                boolean prompt = passes % PROMPT_EVERY == PROMPT_EVERY - 1;
                batch.clear();
                int n = 0;
                if (prompt) {
                    // Every other prompt pass whole chunks, the others runs of any length that fits (up to a whole
                    // batch of one session, as a failover's replay sends) with or without an output row, at whatever
                    // positions the sessions reached: a serving batch's chunks are neither all whole nor aligned to
                    // attention's runs of 16. Kernels compiled on whole aligned chunks only met branches they had
                    // never taken on a failover's first replay batch: TiledAttention.lanes hit an uncommon trap and
                    // ran deoptimised while C2 compiled it again (its thread took 0.86 s of the replacement's CPU
                    // during the replay of a 3-stage llama-1b route).
                    boolean whole = (passes / PROMPT_EVERY) % 2 == 0;
                    for (int s = 0; s < PROMPT_SESSIONS && n < maxRows; s++) {
                        StateSlot slot = slots[sessions + s];
                        int len = whole ? Math.min(maxRows - n, chunk) : 1 + random.nextInt(maxRows - n);
                        boolean output = whole || random.nextBoolean();
                        if (slot.length() + len > promptContext) slot.truncate(0);
                        int at = slot.length();
                        for (int r = 0; r < len; r++) add(batch, slot, at + r, every || output && r == len - 1, first, vocab, random, row);
                        n += len;
                    }
                } else {
                    n = passes % 2 == 0 ? sessions : 1;
                    for (int r = 0; r < n; r++) {
                        StateSlot slot = slots[r];
                        if (slot.length() >= context) slot.truncate(0);
                        add(batch, slot, slot.length(), true, first, vocab, random, row);
                    }
                }
                engine.forward(batch);
                done += (long) n * layers;
                if (prompt && timed) {
                    long now = jit.getTotalCompilationTime();
                    quiet = now - roundJit < QUIET_JIT_MS;
                    roundJit = now;
                }
            }
        } finally {
            for (StateSlot s : slots) if (s != null) s.close();
        }
        return passes;
    }

    /** One row at {@code pos}: a pseudo-random token on a first stage, a pseudo-random boundary row on a later one. */
    private static void add(Batch batch, StateSlot slot, int pos, boolean output, boolean first, int vocab,
                            java.util.SplittableRandom random, float[] row) {
        if (first) {
            batch.addToken(slot, pos, random.nextInt(vocab), output);
        } else {
            for (int i = 0; i < row.length; i++) row[i] = (float) random.nextGaussian();
            batch.addBoundary(slot, pos, row, 0, output);
        }
    }
}
