package dgr.engine.kernel;

import static dgr.engine.kernel.SimdKernels.F;
import static dgr.engine.kernel.SimdKernels.sum8;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * Q6_K (super-block of 256: ql[128] low nibbles, qh[64] high 2-bit pairs, int8 scales[16], f16 d)
 * decoded in registers. Sub-block {@code s} (values {@code 16s .. 16s+15}) of half {@code n = s >> 3}
 * and group {@code g = (s >> 1) & 3} takes its low nibble from {@code ql[64n + 32(g & 1) + l]}
 * (shifted by {@code 4(g >> 1)}), its high bits from {@code qh[32n + l]} (shifted by {@code 2g}),
 * with {@code l = 16(s & 1) .. +15}; ggml's value is {@code (d·sc[s])·(q − 32)}.
 *
 * <p>Order per output element (the Q6_K instance of the block order of {@link SimdKernels}): for
 * each 16-value sub-block, {@code t = q0·x0}, {@code t = fma(q1, x1, t)} with {@code qc} the exact
 * integers {@code q − 32} as floats, then {@code acc[s & 1] = fma(t, d·sc[s], acc[s & 1])}; the two
 * accumulators are added lane-wise, then {@link SimdKernels#sum8}. Scaling once per sub-block
 * instead of once per weight (as the old decode-then-FMA path did) saves a multiply per weight;
 * the two accumulators keep two independent FMA chains in flight at batch 1. The decode is written
 * out in every kernel, not in a helper: a helper returning a vector that C2 declines to inline
 * boxes every vector. Every batch row runs that same sequence, so results do not depend on the batch size.
 */
final class SimdQ6K {
    private static final VectorSpecies<Byte> B8 = ByteVector.SPECIES_64;
    private static final VectorSpecies<Integer> I = IntVector.SPECIES_256;
    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;
    private static final ValueLayout.OfShort I16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(LE);
    private static final long BLOCK = 210;

    private SimdQ6K() {}

    static void matmul(WeightMatrix w, float[] x, int nRows, float[] out, int oStart, int oEnd, float[] lanes) {
        MemorySegment m = w.data();
        int cols = w.cols(), rows = w.rows(), nb = cols / 256;
        // One batch row per pass. Kernels decoding a sub-block once for 2 and 4 rows (same per-row
        // sequence) measured 2x faster in KernelBench but in the whole model C2 left them on the
        // Vector API's non-intrinsic fallback (minutes per step), so every row takes row1.
        for (int b = 0; b < nRows; b++) {
            for (int o = oStart; o < oEnd; o++) out[b * rows + o] = row1(m, w.rowOffset(o), nb, x, b * cols, lanes);
        }
    }

    private static float row1(MemorySegment m, long off, int nb, float[] x, int xb, float[] lanes) {
        FloatVector a00 = FloatVector.zero(F), a01 = a00;
        int x0 = xb;
        for (int k = 0; k < nb; k++, off += BLOCK) {
            float d = Float.float16ToFloat(m.get(I16, off + 208));
            // (n, h): half n of the block, l = 16h .. 16h+15; its sub-blocks s = 8n + 2g + h, g = 0..3,
            // share the ql and qh bytes and all go to accumulator h (= s & 1).
            for (int nh = 0; nh < 4; nh++) {
                int n = nh >> 1, h = nh & 1, i = 256 * k + 128 * n + 16 * h;
                long ql = off + 64L * n + 16 * h, qh = off + 128 + 32L * n + 16 * h, sc = off + 192 + 8L * n + h;
                IntVector la0 = (IntVector) ByteVector.fromMemorySegment(B8, m, ql, LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, I, 0);
                IntVector la8 = (IntVector) ByteVector.fromMemorySegment(B8, m, ql + 8, LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, I, 0);
                IntVector lb0 = (IntVector) ByteVector.fromMemorySegment(B8, m, ql + 32, LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, I, 0);
                IntVector lb8 = (IntVector) ByteVector.fromMemorySegment(B8, m, ql + 40, LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, I, 0);
                IntVector h0 = (IntVector) ByteVector.fromMemorySegment(B8, m, qh, LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, I, 0);
                IntVector h8 = (IntVector) ByteVector.fromMemorySegment(B8, m, qh + 8, LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, I, 0);
                FloatVector q0a = (FloatVector) la0.and(15).or(h0.lanewise(VectorOperators.LSHL, 4).and(48)).sub(32).convert(VectorOperators.I2F, 0);
                FloatVector q0b = (FloatVector) la8.and(15).or(h8.lanewise(VectorOperators.LSHL, 4).and(48)).sub(32).convert(VectorOperators.I2F, 0);
                FloatVector s0 = FloatVector.broadcast(F, d * m.get(ValueLayout.JAVA_BYTE, sc + 0));
                a00 = q0b.fma(FloatVector.fromArray(F, x, x0 + i + 0 + 8), q0a.mul(FloatVector.fromArray(F, x, x0 + i + 0))).fma(s0, a00);
                FloatVector q1a = (FloatVector) lb0.and(15).or(h0.lanewise(VectorOperators.LSHR, 2).lanewise(VectorOperators.LSHL, 4).and(48)).sub(32).convert(VectorOperators.I2F, 0);
                FloatVector q1b = (FloatVector) lb8.and(15).or(h8.lanewise(VectorOperators.LSHR, 2).lanewise(VectorOperators.LSHL, 4).and(48)).sub(32).convert(VectorOperators.I2F, 0);
                FloatVector s1 = FloatVector.broadcast(F, d * m.get(ValueLayout.JAVA_BYTE, sc + 2));
                a00 = q1b.fma(FloatVector.fromArray(F, x, x0 + i + 32 + 8), q1a.mul(FloatVector.fromArray(F, x, x0 + i + 32))).fma(s1, a00);
                FloatVector q2a = (FloatVector) la0.lanewise(VectorOperators.LSHR, 4).and(15).or(h0.lanewise(VectorOperators.LSHR, 4).lanewise(VectorOperators.LSHL, 4).and(48)).sub(32).convert(VectorOperators.I2F, 0);
                FloatVector q2b = (FloatVector) la8.lanewise(VectorOperators.LSHR, 4).and(15).or(h8.lanewise(VectorOperators.LSHR, 4).lanewise(VectorOperators.LSHL, 4).and(48)).sub(32).convert(VectorOperators.I2F, 0);
                FloatVector s2 = FloatVector.broadcast(F, d * m.get(ValueLayout.JAVA_BYTE, sc + 4));
                a00 = q2b.fma(FloatVector.fromArray(F, x, x0 + i + 64 + 8), q2a.mul(FloatVector.fromArray(F, x, x0 + i + 64))).fma(s2, a00);
                FloatVector q3a = (FloatVector) lb0.lanewise(VectorOperators.LSHR, 4).and(15).or(h0.lanewise(VectorOperators.LSHR, 6).lanewise(VectorOperators.LSHL, 4).and(48)).sub(32).convert(VectorOperators.I2F, 0);
                FloatVector q3b = (FloatVector) lb8.lanewise(VectorOperators.LSHR, 4).and(15).or(h8.lanewise(VectorOperators.LSHR, 6).lanewise(VectorOperators.LSHL, 4).and(48)).sub(32).convert(VectorOperators.I2F, 0);
                FloatVector s3 = FloatVector.broadcast(F, d * m.get(ValueLayout.JAVA_BYTE, sc + 6));
                a00 = q3b.fma(FloatVector.fromArray(F, x, x0 + i + 96 + 8), q3a.mul(FloatVector.fromArray(F, x, x0 + i + 96))).fma(s3, a00);
                // Swap each row's pair so its first is accumulator h of the next (n, h): no vector select.
                FloatVector t0 = a00; a00 = a01; a01 = t0;
            }
        }
        a00.add(a01).intoArray(lanes, 0);
        return sum8(lanes);
    }
}
