package dgr.node.stage;

import com.google.protobuf.ByteString;
import com.google.protobuf.UnsafeByteOperations;
import java.util.ArrayList;
import java.util.Arrays;

/**
 * The boundary rows a stage sent downstream for one live session, positions {@code 0..size()-1},
 * kept so a replacement for a dead downstream stage can be fed them and only the dead span is
 * recomputed. Its bytes count in the stage's state bytes.
 *
 * <p>Kept in the wire's encoding ({@link RowCodec}), so the rows a message carries are a view of the
 * kept bytes ({@link #wire}), not a third copy: a decode row is encoded once, here, on the head's way
 * from its forward to the transport.
 *
 * <p>In pages of at most {@link Downlinks#MAX_ENTRY_BYTES} (whole rows): growing never copies more
 * than one page, a session's rows are not bound by one array's 2 GiB, and an entry of a message is one
 * view, or two joined without a copy. The last page doubles until full, so a short session holds
 * little.
 *
 * <p>An invariant {@link #wire}'s views rely on: bytes once written never change. gRPC may hold a
 * message after {@code onNext} returns (retry buffers), and a page that grows is copied, leaving the
 * old array to the views taken from it. A position kept again must therefore carry the same bits,
 * which batch invariance guarantees (a replayed or re-sent row is the same computation); {@link #put}
 * checks it when assertions are on.
 */
final class KeptRows {
    private final int width, rowBytes, pageRows;
    private final ArrayList<byte[]> pages = new ArrayList<>();
    private int size;
    private long bytes;

    KeptRows(int width) {
        this.width = width;
        this.rowBytes = width * Float.BYTES;
        this.pageRows = Math.max(1, Downlinks.MAX_ENTRY_BYTES / rowBytes);
    }

    /** Appends rows at positions {@code from..from+count-1}; a position already kept is overwritten (same bits). */
    void put(int from, float[] src, int off, int count) {
        if (from > size) throw new IllegalStateException("kept rows end at " + size + ", cannot keep position " + from);
        for (int done = 0; done < count; ) {
            int pos = from + done, at = pos % pageRows, n = Math.min(count - done, pageRows - at);
            byte[] page = page(pos / pageRows, at + n);
            int kept = Math.min(n, size - pos);
            assert kept <= 0 || unchanged(page, at, src, off + done * width, kept);
            RowCodec.encodeInto(src, off + done * width, n * width, page, at * rowBytes);
            done += n;
        }
        size = Math.max(size, from + count);
    }

    /** Page {@code index} with room for {@code rows} rows: a new page, or the last one grown. */
    private byte[] page(int index, int rows) {
        if (index == pages.size()) pages.add(new byte[0]);
        byte[] p = pages.get(index);
        if (p.length < rows * rowBytes) {
            int grown = Math.min(pageRows, Math.max(rows, Math.max(16, 2 * p.length / rowBytes)));
            bytes += (long) (grown * rowBytes) - p.length;
            pages.set(index, p = Arrays.copyOf(p, grown * rowBytes));
        }
        return p;
    }

    private boolean unchanged(byte[] page, int at, float[] src, int off, int n) {
        byte[] again = new byte[n * rowBytes];
        RowCodec.encodeInto(src, off, n * width, again, 0);
        return Arrays.equals(page, at * rowBytes, (at + n) * rowBytes, again, 0, again.length);
    }

    /** Rows {@code from..from+count-1} as wire bytes ({@code Rows.data}): views of the kept pages, not a copy. */
    ByteString wire(int from, int count) {
        if (from < 0 || count < 0 || from > size - count) throw new IndexOutOfBoundsException("rows " + from + "+" + count + " of " + size);
        ByteString out = ByteString.EMPTY;
        for (int done = 0; done < count; ) {
            int pos = from + done, at = pos % pageRows, n = Math.min(count - done, pageRows - at);
            ByteString view = UnsafeByteOperations.unsafeWrap(pages.get(pos / pageRows), at * rowBytes, n * rowBytes);
            out = done == 0 ? view : out.concat(view);
            done += n;
        }
        return out;
    }

    int size() { return size; }

    long bytes() { return bytes; }
}
