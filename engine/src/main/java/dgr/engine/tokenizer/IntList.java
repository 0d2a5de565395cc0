package dgr.engine.tokenizer;

import java.util.Arrays;

/** Growable int array: token output without boxing. */
final class IntList {
    private int[] data;
    private int size;

    IntList(int capacity) { data = new int[Math.max(8, capacity)]; }

    void add(int v) {
        if (size == data.length) data = Arrays.copyOf(data, data.length * 2);
        data[size++] = v;
    }

    int size() { return size; }

    int get(int i) { return data[i]; }

    int[] toArray() { return Arrays.copyOf(data, size); }
}
