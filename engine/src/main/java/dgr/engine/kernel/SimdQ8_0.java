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
 * Q8_0 (f16 d; int8 q[32]; x = d·q) decoded in registers, 8 int8 → 8 floats per conversion.
 *
 * <p>Order per output element, shared by every kernel here so the batch size never changes a bit:
 * for each 32-value block {@code t = q0·x0}, {@code t = fma(q1, x1, t)}, {@code fma(q2, x2, t)},
 * {@code fma(q3, x3, t)} ({@code qc} the int8 values {@code 8c .. 8c+7} as floats), then
 * {@code acc = fma(t, d, acc)}; finally {@link SimdKernels#sum8}. Scaling once per block instead
 * of once per weight saves four multiplies a block and leaves one short dependency chain per block.
 *
 * <p><b>Written out, not shared with {@link SimdQ4_0}</b>, though the two differ only in the four
 * decode lines per block: one shared walk with the format's chunk decode as a small method C2
 * inlines (tried three ways: an abstract method, a final one switching on the format, static
 * methods with the format as an argument) gave the same bits and measured equal on the kernel
 * alone (in-JVM alternating, 2048 × 768 Q8_0, B = 1 and 4), but 9–16% fewer tokens per second in
 * the whole model at batch 4 (llama-110m Q8_0, simd engine, 2 threads, tools/ab/run.sh alternating
 * one JVM: new build faster in 63–69 of 200 steps, where the unchanged code against itself gave
 * 87–100 of 200; 2-vCPU machine shared with other builds, 2026-12-02).
 */
final class SimdQ8_0 {
    private static final VectorSpecies<Byte> B8 = ByteVector.SPECIES_64;
    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;
    private static final ValueLayout.OfShort I16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(LE);
    private static final long BLOCK = 34;

    private SimdQ8_0() {}

    static void matmul(WeightMatrix w, float[] input, int nRows, float[] out, int oStart, int oEnd, Scratch s) {
        MemorySegment m = w.data();
        int cols = w.cols(), rows = w.rows(), nb = cols / 32;
        float[] lanes = s.lanes;
        // The input copied once per input and worker to a 32-byte-aligned start (HeapAlignment):
        // the four activation loads per block then never straddle a cache line (B=4 11% faster
        // on L2-resident weights, same JVM alternating; B=1 unchanged).
        float[] x = s.plain.copy(input, nRows, cols, s.epoch).scaled;
        int pad = SpanInput.PAD;
        // Batch groups outer, output rows inner: a group's activations (4 rows) stay in L1/L2 while
        // the caller's chunk of weight rows is walked, instead of every group's rows being swapped
        // in for each weight row (at B = 8 that made the per-token cost worse than at B = 4). Four
        // rows per pass, not eight: an eight-row pass (eight activation bases and accumulators)
        // measured 30% slower per token in the whole model.
        // The first group streams the chunk from memory: rows prefetched ahead of it (Prefetch).
        int ahead = Prefetch.start(w, oStart, oEnd);
        int b = 0;
        for (; b + 4 <= nRows; b += 4) {
            for (int o = oStart; o < oEnd; o++) {
                if (b == 0) Prefetch.next(w, o, ahead, oEnd);
                rows4(m, w.rowOffset(o), nb, x, pad, cols, b, out, rows, o, lanes);
            }
        }
        if (b + 2 <= nRows) {
            for (int o = oStart; o < oEnd; o++) {
                if (b == 0) Prefetch.next(w, o, ahead, oEnd);
                rows2(m, w.rowOffset(o), nb, x, pad, cols, b, out, rows, o, lanes);
            }
            b += 2;
        }
        if (b < nRows) {
            for (int o = oStart; o < oEnd; o++) {
                if (b == 0) Prefetch.next(w, o, ahead, oEnd);
                out[b * rows + o] = row1(m, w.rowOffset(o), nb, x, pad + b * cols, lanes);
            }
        }
    }

    /** One batch row, one output. */
    private static float row1(MemorySegment m, long off, int nb, float[] x, int xb, float[] lanes) {
        FloatVector acc = FloatVector.zero(F);
        for (int k = 0; k < nb; k++, off += BLOCK, xb += 32) {
            FloatVector d = FloatVector.broadcast(F, Float.float16ToFloat(m.get(I16, off)));
            FloatVector q0 = (FloatVector) ByteVector.fromMemorySegment(B8, m, off + 2, LE).convertShape(VectorOperators.B2F, F, 0);
            FloatVector q1 = (FloatVector) ByteVector.fromMemorySegment(B8, m, off + 10, LE).convertShape(VectorOperators.B2F, F, 0);
            FloatVector q2 = (FloatVector) ByteVector.fromMemorySegment(B8, m, off + 18, LE).convertShape(VectorOperators.B2F, F, 0);
            FloatVector q3 = (FloatVector) ByteVector.fromMemorySegment(B8, m, off + 26, LE).convertShape(VectorOperators.B2F, F, 0);
            FloatVector t = q0.mul(FloatVector.fromArray(F, x, xb));
            t = q1.fma(FloatVector.fromArray(F, x, xb + 8), t);
            t = q2.fma(FloatVector.fromArray(F, x, xb + 16), t);
            t = q3.fma(FloatVector.fromArray(F, x, xb + 24), t);
            acc = t.fma(d, acc);
        }
        acc.intoArray(lanes, 0);
        return sum8(lanes);
    }

    /** Four batch rows, one output: each block is decoded once for all four. */
    private static void rows4(MemorySegment m, long off, int nb, float[] x, int pad, int cols, int b, float[] out, int rows, int o,
                              float[] lanes) {
        FloatVector a0 = FloatVector.zero(F), a1 = a0, a2 = a0, a3 = a0;
        int x0 = pad + b * cols, x1 = x0 + cols, x2 = x1 + cols, x3 = x2 + cols;
        for (int k = 0, i = 0; k < nb; k++, off += BLOCK, i += 32) {
            FloatVector d = FloatVector.broadcast(F, Float.float16ToFloat(m.get(I16, off)));
            FloatVector q0 = (FloatVector) ByteVector.fromMemorySegment(B8, m, off + 2, LE).convertShape(VectorOperators.B2F, F, 0);
            FloatVector q1 = (FloatVector) ByteVector.fromMemorySegment(B8, m, off + 10, LE).convertShape(VectorOperators.B2F, F, 0);
            FloatVector q2 = (FloatVector) ByteVector.fromMemorySegment(B8, m, off + 18, LE).convertShape(VectorOperators.B2F, F, 0);
            FloatVector q3 = (FloatVector) ByteVector.fromMemorySegment(B8, m, off + 26, LE).convertShape(VectorOperators.B2F, F, 0);
            FloatVector t0 = q0.mul(FloatVector.fromArray(F, x, x0 + i));
            FloatVector t1 = q0.mul(FloatVector.fromArray(F, x, x1 + i));
            FloatVector t2 = q0.mul(FloatVector.fromArray(F, x, x2 + i));
            FloatVector t3 = q0.mul(FloatVector.fromArray(F, x, x3 + i));
            t0 = q1.fma(FloatVector.fromArray(F, x, x0 + i + 8), t0);
            t1 = q1.fma(FloatVector.fromArray(F, x, x1 + i + 8), t1);
            t2 = q1.fma(FloatVector.fromArray(F, x, x2 + i + 8), t2);
            t3 = q1.fma(FloatVector.fromArray(F, x, x3 + i + 8), t3);
            t0 = q2.fma(FloatVector.fromArray(F, x, x0 + i + 16), t0);
            t1 = q2.fma(FloatVector.fromArray(F, x, x1 + i + 16), t1);
            t2 = q2.fma(FloatVector.fromArray(F, x, x2 + i + 16), t2);
            t3 = q2.fma(FloatVector.fromArray(F, x, x3 + i + 16), t3);
            a0 = q3.fma(FloatVector.fromArray(F, x, x0 + i + 24), t0).fma(d, a0);
            a1 = q3.fma(FloatVector.fromArray(F, x, x1 + i + 24), t1).fma(d, a1);
            a2 = q3.fma(FloatVector.fromArray(F, x, x2 + i + 24), t2).fma(d, a2);
            a3 = q3.fma(FloatVector.fromArray(F, x, x3 + i + 24), t3).fma(d, a3);
        }
        a0.intoArray(lanes, 0);
        out[b * rows + o] = sum8(lanes);
        a1.intoArray(lanes, 0);
        out[(b + 1) * rows + o] = sum8(lanes);
        a2.intoArray(lanes, 0);
        out[(b + 2) * rows + o] = sum8(lanes);
        a3.intoArray(lanes, 0);
        out[(b + 3) * rows + o] = sum8(lanes);
    }

    /** Two batch rows, one output: the same per-row sequence as {@link #rows4}. */
    private static void rows2(MemorySegment m, long off, int nb, float[] x, int pad, int cols, int b, float[] out, int rows, int o,
                              float[] lanes) {
        FloatVector a0 = FloatVector.zero(F), a1 = a0;
        int x0 = pad + b * cols, x1 = x0 + cols;
        for (int k = 0, i = 0; k < nb; k++, off += BLOCK, i += 32) {
            FloatVector d = FloatVector.broadcast(F, Float.float16ToFloat(m.get(I16, off)));
            FloatVector q0 = (FloatVector) ByteVector.fromMemorySegment(B8, m, off + 2, LE).convertShape(VectorOperators.B2F, F, 0);
            FloatVector q1 = (FloatVector) ByteVector.fromMemorySegment(B8, m, off + 10, LE).convertShape(VectorOperators.B2F, F, 0);
            FloatVector q2 = (FloatVector) ByteVector.fromMemorySegment(B8, m, off + 18, LE).convertShape(VectorOperators.B2F, F, 0);
            FloatVector q3 = (FloatVector) ByteVector.fromMemorySegment(B8, m, off + 26, LE).convertShape(VectorOperators.B2F, F, 0);
            FloatVector t0 = q0.mul(FloatVector.fromArray(F, x, x0 + i));
            FloatVector t1 = q0.mul(FloatVector.fromArray(F, x, x1 + i));
            t0 = q1.fma(FloatVector.fromArray(F, x, x0 + i + 8), t0);
            t1 = q1.fma(FloatVector.fromArray(F, x, x1 + i + 8), t1);
            t0 = q2.fma(FloatVector.fromArray(F, x, x0 + i + 16), t0);
            t1 = q2.fma(FloatVector.fromArray(F, x, x1 + i + 16), t1);
            a0 = q3.fma(FloatVector.fromArray(F, x, x0 + i + 24), t0).fma(d, a0);
            a1 = q3.fma(FloatVector.fromArray(F, x, x1 + i + 24), t1).fma(d, a1);
        }
        a0.intoArray(lanes, 0);
        out[b * rows + o] = sum8(lanes);
        a1.intoArray(lanes, 0);
        out[(b + 1) * rows + o] = sum8(lanes);
    }
}
