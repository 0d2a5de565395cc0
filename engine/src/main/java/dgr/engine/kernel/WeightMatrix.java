package dgr.engine.kernel;

import dgr.gguf.GgmlType;
import dgr.gguf.TensorInfo;
import java.lang.foreign.MemorySegment;

/**
 * A weight matrix as the kernels see it: {@code rows} rows of {@code cols} values of {@code type},
 * row after row, in ggml block layout (no copy of the mapped file) or in a {@link WeightLayout}
 * the SIMD kernels repacked it into at load. Output element {@code o} of a
 * matmul is row {@code o} dotted with the activation row.
 */
public record WeightMatrix(String name, GgmlType type, int rows, int cols, long rowBytes, MemorySegment data,
                           WeightLayout layout) {

    /** A matrix in the file's own block layout. */
    public WeightMatrix(String name, GgmlType type, int rows, int cols, long rowBytes, MemorySegment data) {
        this(name, type, rows, cols, rowBytes, data, WeightLayout.GGML);
    }

    public WeightMatrix {
        if (cols % 32 != 0) {
            throw new IllegalArgumentException("tensor '" + name + "': " + cols
                    + " columns is not a multiple of 32 (dgr kernels reduce in 32-value chunks)");
        }
        if (data.byteSize() < rowBytes * rows) {
            throw new IllegalArgumentException("tensor '" + name + "': data holds " + data.byteSize()
                    + " bytes, expected " + rowBytes * rows);
        }
    }

    /**
     * Wraps a GGUF tensor ({@code ne = {cols, rows}}, or {@code {cols, rows, n}}: the {@code n}
     * stacked matrices of a mixture of experts, read as one of {@code n·rows} rows); checks its type
     * is one the kernels read.
     */
    public static WeightMatrix of(TensorInfo t) {
        if (t.shape().length < 1 || t.shape().length > 3) {
            throw new IllegalArgumentException("tensor '" + t.name() + "' has shape " + t.shapeString() + ", expected a matrix (or a 3-D stack of them)");
        }
        if (!RowDecoder.supports(t.type())) {
            throw new IllegalArgumentException("tensor '" + t.name() + "' has type " + t.type()
                    + ", which dgr's kernels do not read (supported: " + RowDecoder.SUPPORTED + ")");
        }
        int cols = Math.toIntExact(t.cols());
        int rows = Math.toIntExact(t.rows());
        return new WeightMatrix(t.name(), t.type(), rows, cols, t.type().bytesFor(cols), t.data());
    }

    /**
     * Rows {@code [first, first + count)} as a matrix of their own (no copy), in this matrix's
     * layout: every layout keeps rows whole and in order, {@code rowBytes} apart. Phi-3 stores Q, K
     * and V as one {@code attn_qkv} tensor and the FFN's gate and up projections as one
     * {@code ffn_up}; a mixture-of-experts file stores each expert's matrix as rows of one 3-D
     * tensor, which is repacked whole (one allocation, on huge pages) and then sliced. A layout
     * whose rows interleave in groups ({@link WeightLayout#rowGroup}) slices from a group's first row.
     */
    public WeightMatrix rowSlice(String sliceName, int first, int count) {
        if (first < 0 || count < 1 || first + count > rows) {
            throw new IllegalArgumentException("tensor '" + name + "' has " + rows + " rows, cannot take " + count + " from row " + first);
        }
        int group = layout.rowGroup();
        if (group > 1) {
            // Interleaved rows: the slice starts at a group and keeps its last group whole.
            if (first % group != 0) {
                throw new IllegalArgumentException("tensor '" + name + "' (" + layout + ") keeps rows in groups of " + group
                        + "; cannot take rows from row " + first);
            }
            long from = first * rowBytes, bytes = Math.min(data.byteSize() - from, (count + group - 1) / group * group * rowBytes);
            return new WeightMatrix(sliceName, type, count, cols, rowBytes, data.asSlice(from, bytes), layout);
        }
        return new WeightMatrix(sliceName, type, count, cols, rowBytes, data.asSlice(first * rowBytes, count * rowBytes), layout);
    }

    public long rowOffset(int row) {
        return row * rowBytes;
    }
}
