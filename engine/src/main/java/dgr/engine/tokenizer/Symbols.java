package dgr.engine.tokenizer;

/**
 * The doubly linked list of adjacent text spans that both merge-based tokenizers shrink:
 * symbol i covers {@code [start[i], start[i] + len[i])}; a merged-away symbol has length 0.
 * A symbol's start never moves and it grows only by absorbing its right neighbour, so a queued
 * pair (left, merged length) is still current exactly when {@code len[left] + len[next[left]]}
 * still equals that length.
 */
final class Symbols {
    final int[] start;
    final int[] len;
    final int[] prev;
    final int[] next;

    Symbols(int n) {
        start = new int[n];
        len = new int[n];
        prev = new int[n];
        next = new int[n];
    }

    /** Proposes merging symbols {@code left} and {@code right} (either may be -1: no neighbour). */
    @FunctionalInterface
    interface PairOffer {
        void offer(int left, int right);
    }

    /**
     * Runs the queued merges to a fixed point: every adjacent pair is offered once, then the best
     * queued pair is merged and its new neighbours are offered, until the queue is empty. What
     * "best" means (BPE rank, SentencePiece score) is the offer's and the queue key's business.
     */
    void mergeAll(MergeQueue queue, PairOffer offer) {
        for (int i = 1; i < start.length; i++) offer.offer(i - 1, i);
        while (!queue.isEmpty()) {
            int l = MergeQueue.left(queue.topKey());
            int length = queue.topLength();
            queue.pop();
            int r = next[l];
            if (len[l] == 0 || r < 0 || len[l] + len[r] != length) continue; // stale
            merge(l, r);
            offer.offer(prev[l], l);
            offer.offer(l, next[l]);
        }
    }

    /** Merges symbol {@code r} into its left neighbour {@code l}. */
    void merge(int l, int r) {
        len[l] += len[r];
        len[r] = 0;
        next[l] = next[r];
        if (next[r] >= 0) prev[next[r]] = l;
    }
}
