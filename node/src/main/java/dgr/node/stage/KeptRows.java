package dgr.node.stage;

import com.google.protobuf.ByteString;
import com.google.protobuf.UnsafeByteOperations;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * The boundary rows a stage sent downstream for one live session, positions {@code 0..size()-1},
 * kept so a replacement for a dead downstream stage can be fed them and only the dead span is
 * recomputed. Grows by doubling; its bytes count in the stage's state bytes.
 *
 * <p>Kept in the wire's encoding (float32 little-endian, row after row), so the rows a message
 * carries are a view of the kept bytes ({@link #wire}), not a third copy: a decode row is encoded
 * once, here, on the head's way from its forward to the transport. A view stays valid: bytes once
 * written are never changed (growing copies them into a new array; a position kept again gets the
 * same bits, the same bytes).
 */
final class KeptRows {
    private final int width, rowBytes;
    private byte[] rows;
    private ByteBuffer floats;
    private int size;

    KeptRows(int width) {
        this.width = width;
        this.rowBytes = width * Float.BYTES;
        this.rows = new byte[rowBytes * 16];
        this.floats = ByteBuffer.wrap(rows).order(ByteOrder.LITTLE_ENDIAN);
    }

    /** Appends rows at positions {@code from..from+count-1}; a position already kept is overwritten (same bits). */
    void put(int from, float[] src, int off, int count) {
        if (from > size) throw new IllegalStateException("kept rows end at " + size + ", cannot keep position " + from);
        int end = from + count;
        if ((long) end * rowBytes > rows.length) {
            rows = Arrays.copyOf(rows, Math.max(rows.length * 2, end * rowBytes));
            floats = ByteBuffer.wrap(rows).order(ByteOrder.LITTLE_ENDIAN);
        }
        floats.asFloatBuffer().put(from * width, src, off, count * width);
        size = Math.max(size, end);
    }

    /** Rows {@code from..from+count-1} as wire bytes ({@code Rows.data}): a view, not a copy. */
    ByteString wire(int from, int count) {
        if (from < 0 || count < 0 || from + count > size) throw new IndexOutOfBoundsException("rows " + from + "+" + count + " of " + size);
        return UnsafeByteOperations.unsafeWrap(rows, from * rowBytes, count * rowBytes);
    }

    int size() { return size; }

    long bytes() { return rows.length; }
}
