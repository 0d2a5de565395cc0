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

/**
 * Q4_K (super-block of 256: f16 d, f16 dmin, 12 bytes of 6-bit scales/mins, 128 bytes of nibbles)
 * decoded in registers. Each 64-value group j uses 32 bytes: low nibbles are values 0..31 with
 * (d·sc[2j], dmin·m[2j]), high nibbles values 32..63 with (d·sc[2j+1], dmin·m[2j+1]);
 * x = (d·sc)·q − dmin·m exactly as ggml computes it.
 */
final class SimdQ4K {
    private static final VectorSpecies<Byte> B8 = ByteVector.SPECIES_64;
    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;
    private static final ValueLayout.OfShort I16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(LE);

    private SimdQ4K() {}

    static void matmul(WeightMatrix w, float[] x, int nRows, float[] out, int oStart, int oEnd, float[] lanes) {
        MemorySegment m = w.data();
        int cols = w.cols(), rows = w.rows(), nb = cols / 256;
        // Batch groups outer, output rows inner, so a group's activations stay cached (see SimdQ4_0).
        int b = 0;
        for (; b + 4 <= nRows; b += 4) {
            for (int o = oStart; o < oEnd; o++) rows4(m, w.rowOffset(o), nb, x, cols, b, out, rows, o, lanes);
        }
        for (; b < nRows; b++) {
            for (int o = oStart; o < oEnd; o++) out[b * rows + o] = row1(m, w.rowOffset(o), nb, x, b * cols, lanes);
        }
    }

    private static float row1(MemorySegment m, long off, int nb, float[] x, int xb, float[] lanes) {
        FloatVector a0 = FloatVector.zero(F), a1 = a0;
        for (int k = 0; k < 4 * nb; k++, xb += 64) {
            long blk = off + 144L * (k >> 2);
            int j = k & 3;
            float d = Float.float16ToFloat(m.get(I16, blk)), dmin = Float.float16ToFloat(m.get(I16, blk + 2));
            FloatVector d1 = FloatVector.broadcast(F, d * RowDecoder.scaleMinK4(m, blk + 4, 2 * j, 0));
            FloatVector m1 = FloatVector.broadcast(F, dmin * RowDecoder.scaleMinK4(m, blk + 4, 2 * j, 1));
            FloatVector d2 = FloatVector.broadcast(F, d * RowDecoder.scaleMinK4(m, blk + 4, 2 * j + 1, 0));
            FloatVector m2 = FloatVector.broadcast(F, dmin * RowDecoder.scaleMinK4(m, blk + 4, 2 * j + 1, 1));
            long q = blk + 16 + 32L * j;
            ByteVector qa = ByteVector.fromMemorySegment(B8, m, q, LE), qb = ByteVector.fromMemorySegment(B8, m, q + 8, LE);
            ByteVector qc = ByteVector.fromMemorySegment(B8, m, q + 16, LE), qd = ByteVector.fromMemorySegment(B8, m, q + 24, LE);
            a0 = ((FloatVector) qa.and((byte) 15).convertShape(VectorOperators.B2F, F, 0)).mul(d1).sub(m1).fma(FloatVector.fromArray(F, x, xb), a0);
            a1 = ((FloatVector) qb.and((byte) 15).convertShape(VectorOperators.B2F, F, 0)).mul(d1).sub(m1).fma(FloatVector.fromArray(F, x, xb + 8), a1);
            a0 = ((FloatVector) qc.and((byte) 15).convertShape(VectorOperators.B2F, F, 0)).mul(d1).sub(m1).fma(FloatVector.fromArray(F, x, xb + 16), a0);
            a1 = ((FloatVector) qd.and((byte) 15).convertShape(VectorOperators.B2F, F, 0)).mul(d1).sub(m1).fma(FloatVector.fromArray(F, x, xb + 24), a1);
            a0 = ((FloatVector) qa.lanewise(VectorOperators.LSHR, 4).convertShape(VectorOperators.B2F, F, 0)).mul(d2).sub(m2).fma(FloatVector.fromArray(F, x, xb + 32), a0);
            a1 = ((FloatVector) qb.lanewise(VectorOperators.LSHR, 4).convertShape(VectorOperators.B2F, F, 0)).mul(d2).sub(m2).fma(FloatVector.fromArray(F, x, xb + 40), a1);
            a0 = ((FloatVector) qc.lanewise(VectorOperators.LSHR, 4).convertShape(VectorOperators.B2F, F, 0)).mul(d2).sub(m2).fma(FloatVector.fromArray(F, x, xb + 48), a0);
            a1 = ((FloatVector) qd.lanewise(VectorOperators.LSHR, 4).convertShape(VectorOperators.B2F, F, 0)).mul(d2).sub(m2).fma(FloatVector.fromArray(F, x, xb + 56), a1);
        }
        a0.add(a1).intoArray(lanes, 0);
        return sum8(lanes);
    }

    private static void rows4(MemorySegment m, long off, int nb, float[] x, int cols, int b, float[] out, int rows, int o,
                              float[] lanes) {
        FloatVector a00 = FloatVector.zero(F), a01 = a00, a10 = a00, a11 = a00, a20 = a00, a21 = a00, a30 = a00, a31 = a00;
        int x0 = b * cols, x1 = x0 + cols, x2 = x1 + cols, x3 = x2 + cols;
        for (int k = 0; k < 8 * nb; k++) {
            // k walks 32-value halves: group j = (k >> 1) & 3 of block k >> 3, low nibbles when k is even.
            long blk = off + 144L * (k >> 3);
            int j = (k >> 1) & 3, sub = 2 * j + (k & 1);
            float dv = Float.float16ToFloat(m.get(I16, blk)) * RowDecoder.scaleMinK4(m, blk + 4, sub, 0);
            float mv = Float.float16ToFloat(m.get(I16, blk + 2)) * RowDecoder.scaleMinK4(m, blk + 4, sub, 1);
            FloatVector d = FloatVector.broadcast(F, dv), mn = FloatVector.broadcast(F, mv);
            long q = blk + 16 + 32L * j;
            int shift = 4 * (k & 1), i = 32 * k;
            FloatVector w0 = ((FloatVector) ByteVector.fromMemorySegment(B8, m, q, LE).lanewise(VectorOperators.LSHR, shift).and((byte) 15).convertShape(VectorOperators.B2F, F, 0)).mul(d).sub(mn);
            FloatVector w1 = ((FloatVector) ByteVector.fromMemorySegment(B8, m, q + 8, LE).lanewise(VectorOperators.LSHR, shift).and((byte) 15).convertShape(VectorOperators.B2F, F, 0)).mul(d).sub(mn);
            a00 = w0.fma(FloatVector.fromArray(F, x, x0 + i), a00);
            a01 = w1.fma(FloatVector.fromArray(F, x, x0 + i + 8), a01);
            a10 = w0.fma(FloatVector.fromArray(F, x, x1 + i), a10);
            a11 = w1.fma(FloatVector.fromArray(F, x, x1 + i + 8), a11);
            a20 = w0.fma(FloatVector.fromArray(F, x, x2 + i), a20);
            a21 = w1.fma(FloatVector.fromArray(F, x, x2 + i + 8), a21);
            a30 = w0.fma(FloatVector.fromArray(F, x, x3 + i), a30);
            a31 = w1.fma(FloatVector.fromArray(F, x, x3 + i + 8), a31);
            FloatVector w2 = ((FloatVector) ByteVector.fromMemorySegment(B8, m, q + 16, LE).lanewise(VectorOperators.LSHR, shift).and((byte) 15).convertShape(VectorOperators.B2F, F, 0)).mul(d).sub(mn);
            FloatVector w3 = ((FloatVector) ByteVector.fromMemorySegment(B8, m, q + 24, LE).lanewise(VectorOperators.LSHR, shift).and((byte) 15).convertShape(VectorOperators.B2F, F, 0)).mul(d).sub(mn);
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
}
