package dgr.engine.tokenizer;

import java.util.Arrays;

/**
 * Min-heap of candidate merges for the merge loops, kept in primitive arrays: a heap of objects
 * spent most of a long word's time on cache misses. An entry is a {@code long} priority
 * (lower pops first; callers put the merge's rank or score in the high half and the left
 * symbol's index in the low half, so ties go to the leftmost pair) plus the merged length,
 * which is how a pop recognises a pair that earlier merges have made stale.
 */
final class MergeQueue {
    private long[] keys;
    private int[] lengths;
    private int size;

    MergeQueue(int capacity) {
        keys = new long[Math.max(8, capacity)];
        lengths = new int[keys.length];
    }

    static long key(int priority, int left) { return ((long) priority << 32) | left; }

    static int left(long key) { return (int) key; }

    /** Orders floats descending as ints ascending: a higher score gets a smaller priority. */
    static int descending(float score) {
        int bits = Float.floatToIntBits(score);
        return ~(bits ^ ((bits >> 31) & 0x7FFFFFFF));
    }

    boolean isEmpty() { return size == 0; }

    void push(long key, int length) {
        if (size == keys.length) {
            keys = Arrays.copyOf(keys, size * 2);
            lengths = Arrays.copyOf(lengths, size * 2);
        }
        int i = size++;
        while (i > 0) {
            int parent = (i - 1) >>> 1;
            if (keys[parent] <= key) break;
            keys[i] = keys[parent];
            lengths[i] = lengths[parent];
            i = parent;
        }
        keys[i] = key;
        lengths[i] = length;
    }

    long topKey() { return keys[0]; }

    int topLength() { return lengths[0]; }

    void pop() {
        long key = keys[--size];
        int length = lengths[size];
        int i = 0;
        int half = size >>> 1;
        while (i < half) {
            int child = 2 * i + 1;
            if (child + 1 < size && keys[child + 1] < keys[child]) child++;
            if (key <= keys[child]) break;
            keys[i] = keys[child];
            lengths[i] = lengths[child];
            i = child;
        }
        keys[i] = key;
        lengths[i] = length;
    }
}
