package dgr.node.stage;

import java.util.Arrays;

/**
 * The boundary rows a stage sent downstream for one live session, positions {@code 0..size()-1},
 * kept so a replacement for a dead downstream stage can be fed them and only the dead span is
 * recomputed. Grows by doubling; its bytes count in the stage's state bytes.
 */
final class KeptRows {
    private final int width;
    private float[] rows;
    private int size;

    KeptRows(int width) {
        this.width = width;
        this.rows = new float[width * 16];
    }

    /** Appends rows at positions {@code from..from+count-1}; a position already kept is overwritten (same bits). */
    void put(int from, float[] src, int off, int count) {
        if (from > size) throw new IllegalStateException("kept rows end at " + size + ", cannot keep position " + from);
        int end = from + count;
        if ((long) end * width > rows.length) rows = Arrays.copyOf(rows, Math.max(rows.length * 2, end * width));
        System.arraycopy(src, off, rows, from * width, count * width);
        size = Math.max(size, end);
    }

    int size() { return size; }

    float[] array() { return rows; }

    long bytes() { return (long) rows.length * Float.BYTES; }
}
