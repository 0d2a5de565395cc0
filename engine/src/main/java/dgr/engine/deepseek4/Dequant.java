package dgr.engine.deepseek4;

import dgr.gguf.GgmlType;
import dgr.gguf.GgufFormatException;
import dgr.gguf.TensorInfo;
import dgr.gguf.codec.Codecs;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/** Turns a GGUF tensor into float32 values (exactly, as gguf-py and ggml's to_float do). */
final class Dequant {
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfInt I32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private Dequant() {}

    static float[] floats(TensorInfo t) {
        long n = t.elementCount();
        if (n > Integer.MAX_VALUE - 8) throw new GgufFormatException("tensor '" + t.name() + "' is too large for this engine");
        float[] out = new float[(int) n];
        MemorySegment s = t.data();
        if (t.type() == GgmlType.F32) {
            MemorySegment.copy(s, F32, 0, out, 0, out.length);
        } else if (t.type() == GgmlType.I32 || t.type() == GgmlType.I64 || t.type() == GgmlType.I8 || t.type() == GgmlType.I16) {
            throw new GgufFormatException("tensor '" + t.name() + "' is integer (" + t.type() + "), expected weights");
        } else {
            // Row by row so a codec's block never straddles a row.
            int cols = Math.toIntExact(t.cols());
            long rowBytes = t.type().bytesFor(cols);
            var codec = Codecs.of(t.type());
            long rows = t.rows();
            for (long r = 0; r < rows; r++) codec.dequantize(s, r * rowBytes, out, (int) (r * cols), cols);
        }
        return out;
    }

    static int[] ints(TensorInfo t) {
        if (t.type() != GgmlType.I32) throw new GgufFormatException("tensor '" + t.name() + "' must be I32, found " + t.type());
        int[] out = new int[Math.toIntExact(t.elementCount())];
        MemorySegment.copy(t.data(), I32, 0, out, 0, out.length);
        return out;
    }
}
