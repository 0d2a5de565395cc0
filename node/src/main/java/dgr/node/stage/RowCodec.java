package dgr.node.stage;

import com.google.protobuf.ByteString;
import com.google.protobuf.UnsafeByteOperations;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/** Boundary rows on the wire: float32 values, little-endian, row after row. */
final class RowCodec {
    private RowCodec() {}

    static ByteString encode(float[] src, int off, int floats) {
        ByteBuffer b = ByteBuffer.allocate(floats * Float.BYTES).order(ByteOrder.LITTLE_ENDIAN);
        b.asFloatBuffer().put(src, off, floats);
        // The array is this method's own and never written again: wrapped, not copied a second time
        // (a decode row is on the critical path of every token; protobuf's documented zero-copy entry).
        return UnsafeByteOperations.unsafeWrap(b.array());
    }

    /** Decodes into {@code dst[off..]}; the caller has checked the length. */
    static void decode(ByteString data, float[] dst, int off) {
        data.asReadOnlyByteBuffer().order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer().get(dst, off, data.size() / Float.BYTES);
    }
}
