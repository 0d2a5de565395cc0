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

    /** Merges symbol {@code r} into its left neighbour {@code l}. */
    void merge(int l, int r) {
        len[l] += len[r];
        len[r] = 0;
        next[l] = next[r];
        if (next[r] >= 0) prev[next[r]] = l;
    }
}
