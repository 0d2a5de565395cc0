package dgr.cli;

/** The k largest entries of a logit row: highest first, lower id first on ties. */
final class TopK {
    private TopK() {}

    static int[] indices(float[] a, int off, int n, int k) {
        int[] best = new int[k];
        int size = 0;
        for (int i = 0; i < n; i++) {
            float v = a[off + i];
            if (size == k && !(v > a[off + best[k - 1]])) continue;
            int j = size < k ? size++ : k - 1;
            while (j > 0 && v > a[off + best[j - 1]]) {
                best[j] = best[j - 1];
                j--;
            }
            best[j] = i;
        }
        return best;
    }
}
