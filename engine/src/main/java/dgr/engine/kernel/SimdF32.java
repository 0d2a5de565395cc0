package dgr.engine.kernel;

import static dgr.engine.kernel.SimdKernels.F;
import static dgr.engine.kernel.SimdKernels.sum8;

import dgr.gguf.GgmlType;
import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/** Float32 weight rows (mapped F32 tensors, or rows another type was decoded into) times batch rows. */
final class SimdF32 {
    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;

    private static final VectorSpecies<Short> S128 = ShortVector.SPECIES_128;
    private static final VectorSpecies<Integer> I = IntVector.SPECIES_256;

    private SimdF32() {}

    /**
     * Row {@code row} of an F16 or BF16 matrix into {@code dst} as f32, eight values per vector
     * operation: BF16 is its bits shifted into the high half; F16 the exact bit conversion
     * {@link SpanKernels#f16x8}, except eight values holding an infinity or NaN, which
     * {@link Float#float16ToFloat} converts one by one. The same values as {@link RowDecoder}
     * (so the same results): llama-1b BF16 at batch 1 2.4 → 4.7 tok/s (llama.cpp 6.2), batch 4 7.7 → 12.0.
     */
    static void decodeHalf(WeightMatrix w, int row, float[] dst) {
        MemorySegment m = w.data();
        long off = w.rowOffset(row);
        int cols = w.cols();
        if (w.type() == GgmlType.BF16) {
            for (int i = 0; i < cols; i += 8) {
                ((IntVector) ShortVector.fromMemorySegment(S128, m, off + 2L * i, LE).convertShape(VectorOperators.S2I, I, 0))
                        .lanewise(VectorOperators.LSHL, 16).reinterpretAsFloats().intoArray(dst, i);
            }
            return;
        }
        for (int i = 0; i < cols; i += 8) {
            ShortVector h = ShortVector.fromMemorySegment(S128, m, off + 2L * i, LE);
            if (h.and((short) 0x7C00).compare(VectorOperators.EQ, (short) 0x7C00).anyTrue()) {
                RowDecoder.decode(GgmlType.F16, m, off + 2L * i, dst, i, 8);
            } else {
                SpanKernels.f16x8(m, off + 2L * i, 0x1p112f, dst, i);
            }
        }
    }

    /**
     * One decoded weight row {@code w[0..cols)} against all batch rows; writes column {@code o} of out.
     * Four batch rows share each weight load ({@link #rows4}, written out): it pays. One row at a time
     * instead (same bits) decoded llama-110m F16 on the simd engine 8% slower at batch 4 (mean 5.91 →
     * 5.44 tok/s, faster in 49 of 120 steps) and 14% at batch 8 (5.68 → 4.89, 41 of 120): tools/ab/run.sh,
     * both builds in one JVM, 2026-12-02, 2 vCPUs shared with other builds (load ~25).
     */
    static void dotRows(float[] w, int cols, float[] x, int nRows, float[] out, int outRows, int o, float[] lanes) {
        int b = 0;
        for (; b + 4 <= nRows; b += 4) rows4(w, cols, x, b, out, outRows, o, lanes);
        for (; b < nRows; b++) {
            FloatVector a0 = FloatVector.zero(F), a1 = FloatVector.zero(F);
            int xb = b * cols;
            for (int i = 0; i < cols; i += 16) {
                a0 = FloatVector.fromArray(F, w, i).fma(FloatVector.fromArray(F, x, xb + i), a0);
                a1 = FloatVector.fromArray(F, w, i + 8).fma(FloatVector.fromArray(F, x, xb + i + 8), a1);
            }
            a0.add(a1).intoArray(lanes, 0);
            out[b * outRows + o] = sum8(lanes);
        }
    }

    private static void rows4(float[] w, int cols, float[] x, int b, float[] out, int outRows, int o, float[] lanes) {
        FloatVector a00 = FloatVector.zero(F), a01 = a00, a10 = a00, a11 = a00, a20 = a00, a21 = a00, a30 = a00, a31 = a00;
        int x0 = b * cols, x1 = x0 + cols, x2 = x1 + cols, x3 = x2 + cols;
        for (int i = 0; i < cols; i += 16) {
            FloatVector w0 = FloatVector.fromArray(F, w, i), w1 = FloatVector.fromArray(F, w, i + 8);
            a00 = w0.fma(FloatVector.fromArray(F, x, x0 + i), a00);
            a01 = w1.fma(FloatVector.fromArray(F, x, x0 + i + 8), a01);
            a10 = w0.fma(FloatVector.fromArray(F, x, x1 + i), a10);
            a11 = w1.fma(FloatVector.fromArray(F, x, x1 + i + 8), a11);
            a20 = w0.fma(FloatVector.fromArray(F, x, x2 + i), a20);
            a21 = w1.fma(FloatVector.fromArray(F, x, x2 + i + 8), a21);
            a30 = w0.fma(FloatVector.fromArray(F, x, x3 + i), a30);
            a31 = w1.fma(FloatVector.fromArray(F, x, x3 + i + 8), a31);
        }
        a00.add(a01).intoArray(lanes, 0);
        out[b * outRows + o] = sum8(lanes);
        a10.add(a11).intoArray(lanes, 0);
        out[(b + 1) * outRows + o] = sum8(lanes);
        a20.add(a21).intoArray(lanes, 0);
        out[(b + 2) * outRows + o] = sum8(lanes);
        a30.add(a31).intoArray(lanes, 0);
        out[(b + 3) * outRows + o] = sum8(lanes);
    }

    /** F32 weights read straight from the mapped tensor; same order as {@link #dotRows}. */
    static void matmulSegment(WeightMatrix w, float[] x, int nRows, float[] out, int oStart, int oEnd, float[] lanes) {
        MemorySegment m = w.data();
        int cols = w.cols(), rows = w.rows();
        for (int o = oStart; o < oEnd; o++) {
            long off = w.rowOffset(o);
            for (int b = 0; b < nRows; b++) {
                FloatVector a0 = FloatVector.zero(F), a1 = FloatVector.zero(F);
                int xb = b * cols;
                for (int i = 0; i < cols; i += 16) {
                    a0 = FloatVector.fromMemorySegment(F, m, off + 4L * i, LE).fma(FloatVector.fromArray(F, x, xb + i), a0);
                    a1 = FloatVector.fromMemorySegment(F, m, off + 4L * i + 32, LE).fma(FloatVector.fromArray(F, x, xb + i + 8), a1);
                }
                a0.add(a1).intoArray(lanes, 0);
                out[b * rows + o] = sum8(lanes);
            }
        }
    }
}
