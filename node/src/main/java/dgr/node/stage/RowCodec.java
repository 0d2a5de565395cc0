package dgr.node.stage;

import com.google.protobuf.ByteString;
import com.google.protobuf.UnsafeByteOperations;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/** Boundary rows on the wire: float32 values, little-endian, row after row. */
final class RowCodec {
    private static final VarHandle LE_FLOAT = MethodHandles.byteArrayViewVarHandle(float[].class, ByteOrder.LITTLE_ENDIAN);

    private RowCodec() {}

    static ByteString encode(float[] src, int off, int floats) {
        byte[] b = new byte[floats * Float.BYTES];
        encodeInto(src, off, floats, b, 0);
        // The array is this method's own and never written again: wrapped, not copied a second time
        // (a decode row is on the critical path of every token; protobuf's documented zero-copy entry).
        return UnsafeByteOperations.unsafeWrap(b);
    }

    /** Writes {@code floats} values of {@code src[off..]} in the wire's encoding at {@code dst[at..]}. */
    static void encodeInto(float[] src, int off, int floats, byte[] dst, int at) {
        for (int i = 0; i < floats; i++) LE_FLOAT.set(dst, at + i * Float.BYTES, src[off + i]);
    }

    /** Decodes into {@code dst[off..]}; the caller has checked the length. */
    static void decode(ByteString data, float[] dst, int off) {
        data.asReadOnlyByteBuffer().order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer().get(dst, off, data.size() / Float.BYTES);
    }
}
