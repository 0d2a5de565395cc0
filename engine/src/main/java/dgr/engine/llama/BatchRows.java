package dgr.engine.llama;

/**
 * The rows of the batch in flight, as the engine checked them: each row's state slot and its
 * position. Filled once per forward pass before any slot is touched; the attention, the latent
 * attention and the engine read it.
 */
final class BatchRows {
    final KvSlot[] slot;
    final int[] pos;
    int n;

    BatchRows(int maxRows) {
        this.slot = new KvSlot[maxRows];
        this.pos = new int[maxRows];
    }
}
