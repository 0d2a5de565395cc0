package dgr.node.metrics;

/**
 * A model's live load, read from its scheduler when asked (so an idle node reports idle, not the
 * last busy iteration).
 *
 * @param running          sessions admitted
 * @param waiting          sessions waiting for admission
 * @param stateBytesUsed   state bytes held by running sessions
 * @param stateBudgetBytes the scheduler's state budget
 */
public record Load(int running, int waiting, long stateBytesUsed, long stateBudgetBytes) {}
