package dgr.engine.kernel;

import static dgr.engine.kernel.SimdKernels.F;
import static dgr.engine.kernel.SimdKernels.sum8;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/** Q8_0 (f16 d; int8 q[32]; x = d·q) decoded in registers, 8 int8 → 8 floats per conversion. */
final class SimdQ8_0 {
    private static final VectorSpecies<Byte> B8 = ByteVector.SPECIES_64;
    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;
    private static final ValueLayout.OfShort I16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(LE);

    private SimdQ8_0() {}

    static void matmul(WeightMatrix w, float[] x, int nRows, float[] out, int oStart, int oEnd, float[] lanes) {
        MemorySegment m = w.data();
        int cols = w.cols(), rows = w.rows(), nb = cols / 32;
        for (int o = oStart; o < oEnd; o++) {
            long off = w.rowOffset(o);
            int b = 0;
            for (; b + 4 <= nRows; b += 4) rows4(m, off, nb, x, cols, b, out, rows, o, lanes);
            if (b + 2 <= nRows) { rows2(m, off, nb, x, cols, b, out, rows, o, lanes); b += 2; }
            for (; b < nRows; b++) out[b * rows + o] = row1(m, off, nb, x, b * cols, lanes);
        }
    }

    private static float row1(MemorySegment m, long off, int nb, float[] x, int xb, float[] lanes) {
        FloatVector a0 = FloatVector.zero(F), a1 = a0;
        for (int k = 0; k < nb; k++, off += 34, xb += 32) {
            FloatVector d = FloatVector.broadcast(F, Float.float16ToFloat(m.get(I16, off)));
            FloatVector w0 = ((FloatVector) ByteVector.fromMemorySegment(B8, m, off + 2, LE).convertShape(VectorOperators.B2F, F, 0)).mul(d);
            FloatVector w1 = ((FloatVector) ByteVector.fromMemorySegment(B8, m, off + 10, LE).convertShape(VectorOperators.B2F, F, 0)).mul(d);
            FloatVector w2 = ((FloatVector) ByteVector.fromMemorySegment(B8, m, off + 18, LE).convertShape(VectorOperators.B2F, F, 0)).mul(d);
            FloatVector w3 = ((FloatVector) ByteVector.fromMemorySegment(B8, m, off + 26, LE).convertShape(VectorOperators.B2F, F, 0)).mul(d);
            a0 = w0.fma(FloatVector.fromArray(F, x, xb), a0);
            a1 = w1.fma(FloatVector.fromArray(F, x, xb + 8), a1);
            a0 = w2.fma(FloatVector.fromArray(F, x, xb + 16), a0);
            a1 = w3.fma(FloatVector.fromArray(F, x, xb + 24), a1);
        }
        a0.add(a1).intoArray(lanes, 0);
        return sum8(lanes);
    }

    private static void rows4(MemorySegment m, long off, int nb, float[] x, int cols, int b, float[] out, int rows, int o,
                              float[] lanes) {
        FloatVector a00 = FloatVector.zero(F), a01 = a00, a10 = a00, a11 = a00, a20 = a00, a21 = a00, a30 = a00, a31 = a00;
        int x0 = b * cols, x1 = x0 + cols, x2 = x1 + cols, x3 = x2 + cols;
        for (int k = 0; k < nb; k++, off += 34) {
            FloatVector d = FloatVector.broadcast(F, Float.float16ToFloat(m.get(I16, off)));
            int i = 32 * k;
            FloatVector w0 = ((FloatVector) ByteVector.fromMemorySegment(B8, m, off + 2, LE).convertShape(VectorOperators.B2F, F, 0)).mul(d);
            FloatVector w1 = ((FloatVector) ByteVector.fromMemorySegment(B8, m, off + 10, LE).convertShape(VectorOperators.B2F, F, 0)).mul(d);
            a00 = w0.fma(FloatVector.fromArray(F, x, x0 + i), a00);
            a01 = w1.fma(FloatVector.fromArray(F, x, x0 + i + 8), a01);
            a10 = w0.fma(FloatVector.fromArray(F, x, x1 + i), a10);
            a11 = w1.fma(FloatVector.fromArray(F, x, x1 + i + 8), a11);
            a20 = w0.fma(FloatVector.fromArray(F, x, x2 + i), a20);
            a21 = w1.fma(FloatVector.fromArray(F, x, x2 + i + 8), a21);
            a30 = w0.fma(FloatVector.fromArray(F, x, x3 + i), a30);
            a31 = w1.fma(FloatVector.fromArray(F, x, x3 + i + 8), a31);
            FloatVector w2 = ((FloatVector) ByteVector.fromMemorySegment(B8, m, off + 18, LE).convertShape(VectorOperators.B2F, F, 0)).mul(d);
            FloatVector w3 = ((FloatVector) ByteVector.fromMemorySegment(B8, m, off + 26, LE).convertShape(VectorOperators.B2F, F, 0)).mul(d);
            a00 = w2.fma(FloatVector.fromArray(F, x, x0 + i + 16), a00);
            a01 = w3.fma(FloatVector.fromArray(F, x, x0 + i + 24), a01);
            a10 = w2.fma(FloatVector.fromArray(F, x, x1 + i + 16), a10);
            a11 = w3.fma(FloatVector.fromArray(F, x, x1 + i + 24), a11);
            a20 = w2.fma(FloatVector.fromArray(F, x, x2 + i + 16), a20);
            a21 = w3.fma(FloatVector.fromArray(F, x, x2 + i + 24), a21);
            a30 = w2.fma(FloatVector.fromArray(F, x, x3 + i + 16), a30);
            a31 = w3.fma(FloatVector.fromArray(F, x, x3 + i + 24), a31);
        }
        a00.add(a01).intoArray(lanes, 0);
        out[b * rows + o] = sum8(lanes);
        a10.add(a11).intoArray(lanes, 0);
        out[(b + 1) * rows + o] = sum8(lanes);
        a20.add(a21).intoArray(lanes, 0);
        out[(b + 2) * rows + o] = sum8(lanes);
        a30.add(a31).intoArray(lanes, 0);
        out[(b + 3) * rows + o] = sum8(lanes);
    }

    /** Two batch rows per weight decode: the same per-row order as {@link #rows4}. */
    private static void rows2(MemorySegment m, long off, int nb, float[] x, int cols, int b, float[] out, int rows, int o,
                              float[] lanes) {
        FloatVector a00 = FloatVector.zero(F), a01 = a00, a10 = a00, a11 = a00;
        int x0 = b * cols, x1 = x0 + cols;
        for (int k = 0; k < nb; k++, off += 34) {
            FloatVector d = FloatVector.broadcast(F, Float.float16ToFloat(m.get(I16, off)));
            int i = 32 * k;
            FloatVector w0 = ((FloatVector) ByteVector.fromMemorySegment(B8, m, off + 2, LE).convertShape(VectorOperators.B2F, F, 0)).mul(d);
            FloatVector w1 = ((FloatVector) ByteVector.fromMemorySegment(B8, m, off + 10, LE).convertShape(VectorOperators.B2F, F, 0)).mul(d);
            a00 = w0.fma(FloatVector.fromArray(F, x, x0 + i), a00);
            a01 = w1.fma(FloatVector.fromArray(F, x, x0 + i + 8), a01);
            a10 = w0.fma(FloatVector.fromArray(F, x, x1 + i), a10);
            a11 = w1.fma(FloatVector.fromArray(F, x, x1 + i + 8), a11);
            FloatVector w2 = ((FloatVector) ByteVector.fromMemorySegment(B8, m, off + 18, LE).convertShape(VectorOperators.B2F, F, 0)).mul(d);
            FloatVector w3 = ((FloatVector) ByteVector.fromMemorySegment(B8, m, off + 26, LE).convertShape(VectorOperators.B2F, F, 0)).mul(d);
            a00 = w2.fma(FloatVector.fromArray(F, x, x0 + i + 16), a00);
            a01 = w3.fma(FloatVector.fromArray(F, x, x0 + i + 24), a01);
            a10 = w2.fma(FloatVector.fromArray(F, x, x1 + i + 16), a10);
            a11 = w3.fma(FloatVector.fromArray(F, x, x1 + i + 24), a11);
        }
        a00.add(a01).intoArray(lanes, 0);
        out[b * rows + o] = sum8(lanes);
        a10.add(a11).intoArray(lanes, 0);
        out[(b + 1) * rows + o] = sum8(lanes);
    }
}
