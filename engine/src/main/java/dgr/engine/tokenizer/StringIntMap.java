package dgr.engine.tokenizer;

/**
 * String → int lookup for vocabularies and merge ranks (up to ~300k entries), built once per model.
 * Open addressing in two flat arrays: no per-entry node or boxed Integer, so a 128k-token
 * vocabulary with 280k merges loads without a burst of millions of small objects.
 */
final class StringIntMap {
    private final String[] keys;
    private final int[] values;
    private final int mask;
    private int size;

    StringIntMap(int expected) {
        int capacity = Integer.highestOneBit(Math.max(4, expected) * 2 - 1) << 1; // ≥ 2× entries: short probe runs
        keys = new String[capacity];
        values = new int[capacity];
        mask = capacity - 1;
    }

    /** Stores {@code key → value} unless the key is already present (first occurrence wins). */
    void putIfAbsent(String key, int value) {
        if (size * 2 >= keys.length) throw new IllegalStateException("StringIntMap sized for fewer entries");
        int i = spread(key.hashCode()) & mask;
        while (keys[i] != null) {
            if (keys[i].equals(key)) return;
            i = (i + 1) & mask;
        }
        keys[i] = key;
        values[i] = value;
        size++;
    }

    /** The value for {@code key}, or -1. */
    int get(String key) {
        int i = spread(key.hashCode()) & mask;
        for (String k; (k = keys[i]) != null; i = (i + 1) & mask) {
            if (k.equals(key)) return values[i];
        }
        return -1;
    }

    int size() { return size; }

    private static int spread(int h) {
        h *= 0x9E3779B9; // String hashes of short texts cluster in the low bits
        return h ^ (h >>> 16);
    }
}
