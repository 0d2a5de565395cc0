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
}
