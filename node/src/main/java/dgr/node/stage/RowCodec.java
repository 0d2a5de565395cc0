package dgr.node.stage;

import com.google.protobuf.ByteString;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/** Boundary rows on the wire: float32 values, little-endian, row after row. */
final class RowCodec {
    private RowCodec() {}

    static ByteString encode(float[] src, int off, int floats) {
        ByteBuffer b = ByteBuffer.allocate(floats * Float.BYTES).order(ByteOrder.LITTLE_ENDIAN);
        b.asFloatBuffer().put(src, off, floats);
        return ByteString.copyFrom(b.array());
    }

    /** Decodes into {@code dst[off..]}; the caller has checked the length. */
    static void decode(ByteString data, float[] dst, int off) {
        data.asReadOnlyByteBuffer().order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer().get(dst, off, data.size() / Float.BYTES);
    }
}
