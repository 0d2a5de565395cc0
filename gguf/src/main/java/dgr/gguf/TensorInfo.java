package dgr.gguf;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * One tensor of a GGUF artifact. {@code shape} is ggml's {@code ne}: fastest axis first, so a
 * matrix with {@code shape = {cols, rows}} stores {@code rows} rows of {@code cols} values.
 * {@code data} is a read-only slice of the memory-mapped file (no copy).
 */
public record TensorInfo(String name, GgmlType type, long[] shape, long offset, MemorySegment data) {

    public long elementCount() {
        long n = 1;
        for (long d : shape) n = Math.multiplyExact(n, d);
        return n;
    }

    public long byteSize() { return type.bytesFor(elementCount()); }

    /** Values per row (ne[0]). */
    public long cols() { return shape[0]; }

    /** Number of rows: product of ne[1..]. */
    public long rows() { return elementCount() / shape[0]; }

    public String shapeString() { return Arrays.toString(shape); }

    @Override
    public String toString() {
        return name + " " + type + " " + shapeString();
    }
}
