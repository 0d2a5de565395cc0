package dgr.engine.kernel;

import static dgr.engine.kernel.SimdKernels.F;
import static dgr.engine.kernel.SimdKernels.sum8;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.stream.IntStream;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * Q4_0 repacked at load so that one 32-byte load yields eight float vectors with one AND (or one
 * shift) and one int-to-float conversion each, instead of the byte widening, masking, shifting and
 * "− 8" of the file layout.
 *
 * <p><b>Layout:</b> a row of {@code nb} blocks holds the {@code nb} block scales as f32 (exact
 * copies of the f16 values: 2 bytes per block more than the file, which costs less than
 * converting them on every pass), then {@code nb / 2} spans of 32 bytes. Span {@code i} covers columns {@code 64i .. 64i+63}; read as
 * eight little-endian ints, nibble {@code k} (bits {@code 4k..4k+3}) of int {@code j} is the
 * unsigned quant (0..15) of column {@code 64i + 8k + j}. Nibbles 0–3 belong to block {@code 2i},
 * 4–7 to block {@code 2i+1}.
 *
 * <p><b>Why no shifts:</b> {@code v & (0xF << 4k)} converts to exactly {@code q·16^k}. Scaling the
 * activation chunk by {@code 16^-k} once per input row (exact: a power of two, for any activation
 * above 2^-102) makes {@code fma(q·16^k, x·16^-k, t)} bit-identical to {@code fma(q, x, t)}.
 * Nibble 7 is taken with an unsigned shift instead (its mask would set the sign bit).
 *
 * <p><b>Order per output element</b> (every kernel here, any batch size or worker split): for each
 * block {@code b}, {@code t = q0·x0}, {@code t = fma(q1, x1, t)}, {@code fma(q2, x2, t)},
 * {@code fma(q3, x3, t)} over its four 8-column chunks (float quants 0..15), then
 * {@code acc = fma(t, d_b, acc)}. The "− 8" of every quant is one more dot product over the row's
 * blocks: {@code cor = fma(d[8c..], s[8c..], cor)} for each group of 8 blocks, where
 * {@code s_b = −8·Σ x} over block {@code b} (lanes of its four chunks added in order, then
 * {@link SimdKernels#sum8}). Result: {@code sum8(acc) + sum8(cor)}. One accumulator per batch row,
 * so four rows fit the 16 AVX2 registers when a span is decoded once for four rows.
 */
final class Q4_0Spans {
    private static final VectorSpecies<Integer> I = IntVector.SPECIES_256;
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;
    private static final int BLOCK = 18;
    /** Activation scale per nibble position: 16^-k for the masked nibbles, 1 for the shifted one. */
    private static final float[] NIBBLE_SCALE = {1f, 0x1p-4f, 0x1p-8f, 0x1p-12f, 0x1p-16f, 0x1p-20f, 0x1p-24f, 1f};

    private Q4_0Spans() {}

    /** Whether a Q4_0 matrix with this many columns can be repacked (whole 64-value spans, 8-block groups). */
    static boolean fits(int cols) {
        return cols % 256 == 0;
    }

    /** Copies a GGML-layout Q4_0 matrix into span layout in {@code arena}; rows in parallel. */
    static WeightMatrix repack(WeightMatrix w, Arena arena) {
        if (w.layout() != WeightLayout.GGML || w.type() != dgr.gguf.GgmlType.Q4_0 || !fits(w.cols())) {
            throw new IllegalArgumentException("tensor '" + w.name() + "' cannot be repacked to Q4_0 spans");
        }
        int nb = w.cols() / 32;
        long inBytes = w.rowBytes(), outBytes = rowBytes(w.cols());
        MemorySegment dst = arena.allocate(outBytes * w.rows(), 64);
        MemorySegment src = w.data();
        int rowsPerTask = 256;
        IntStream.range(0, (w.rows() + rowsPerTask - 1) / rowsPerTask).parallel().forEach(task -> {
            byte[] in = new byte[(int) inBytes], out = new byte[(int) outBytes];
            for (int r = task * rowsPerTask, e = Math.min(w.rows(), r + rowsPerTask); r < e; r++) {
                MemorySegment.copy(src, ValueLayout.JAVA_BYTE, r * inBytes, in, 0, in.length);
                repackRow(in, out, nb);
                MemorySegment.copy(out, 0, dst, ValueLayout.JAVA_BYTE, r * outBytes, out.length);
            }
        });
        return new WeightMatrix(w.name(), w.type(), w.rows(), w.cols(), outBytes, dst, WeightLayout.Q4_0_SPANS);
    }

    /** Bytes of one repacked row: f32 scales and 16 bytes of quants per block. */
    static long rowBytes(int cols) {
        return 20L * (cols / 32);
    }

    /** One row from ggml block layout ({@code in}) to span layout ({@code out}). */
    static void repackRow(byte[] in, byte[] out, int nb) {
        int[] nib = new int[64];
        for (int b = 0; b < nb; b++) {
            int f = Float.floatToRawIntBits(Float.float16ToFloat((short) ((in[b * BLOCK] & 0xFF) | (in[b * BLOCK + 1] << 8))));
            out[4 * b] = (byte) f;
            out[4 * b + 1] = (byte) (f >>> 8);
            out[4 * b + 2] = (byte) (f >>> 16);
            out[4 * b + 3] = (byte) (f >>> 24);
        }
        for (int i = 0; i < nb / 2; i++) {
            // The span's 64 quants in column order: block 2i then block 2i+1, low nibbles first.
            for (int h = 0; h < 2; h++) {
                int qs = (2 * i + h) * BLOCK + 2;
                for (int p = 0; p < 16; p++) {
                    int q = in[qs + p] & 0xFF;
                    nib[32 * h + p] = q & 15;
                    nib[32 * h + p + 16] = q >>> 4;
                }
            }
            int base = 4 * nb + 32 * i;
            for (int j = 0; j < 8; j++) {
                int v = 0;
                for (int k = 0; k < 8; k++) v |= nib[8 * k + j] << (4 * k);
                out[base + 4 * j] = (byte) v;
                out[base + 4 * j + 1] = (byte) (v >>> 8);
                out[base + 4 * j + 2] = (byte) (v >>> 16);
                out[base + 4 * j + 3] = (byte) (v >>> 24);
            }
        }
    }

    static void matmul(WeightMatrix w, float[] x, int nRows, float[] out, int oStart, int oEnd, Scratch s) {
        int cols = w.cols(), rows = w.rows(), nb = cols / 32, spans = nb / 2;
        prepare(x, nRows, cols, s);
        if (s.spanAcc == null || s.spanAcc.length < 32) s.spanAcc = new float[32];
        float[] xs = s.spanX, sb = s.spanC, acc = s.spanAcc;
        MemorySegment m = w.data();
        // Batch groups outer, output rows inner: a group's activations stay in L1/L2 while the
        // chunk's weight rows (in L2 after the first group) are walked; output rows outer made
        // every weight row reread all batch rows' activations from L2.
        int b = 0;
        for (; b + 4 <= nRows; b += 4) {
            for (int o = oStart; o < oEnd; o++) {
                long off = w.rowOffset(o);
                rows4(m, off, nb, spans, xs, b, cols, acc);
                finish(m, off, nb, sb, acc, b, 4, out, rows, o, s.lanes);
            }
        }
        if (b + 2 <= nRows) {
            for (int o = oStart; o < oEnd; o++) {
                long off = w.rowOffset(o);
                rows2(m, off, nb, spans, xs, b, cols, acc);
                finish(m, off, nb, sb, acc, b, 2, out, rows, o, s.lanes);
            }
            b += 2;
        }
        if (b < nRows) {
            for (int o = oStart; o < oEnd; o++) {
                long off = w.rowOffset(o);
                row1(m, off, nb, spans, xs, b, cols, acc);
                finish(m, off, nb, sb, acc, b, 1, out, rows, o, s.lanes);
            }
        }
    }

    /** {@code out = sum8(acc) + sum8(cor)} for batch rows {@code b .. b+n-1} of output {@code o}. */
    private static void finish(MemorySegment m, long off, int nb, float[] sb, float[] acc, int b, int n, float[] out,
                               int rows, int o, float[] lanes) {
        for (int r = 0; r < n; r++) {
            FloatVector cor = FloatVector.zero(F);
            for (int k = 0, so = (b + r) * nb; k < nb; k += 8) {
                cor = FloatVector.fromMemorySegment(F, m, off + 4L * k, LE).fma(FloatVector.fromArray(F, sb, so + k), cor);
            }
            cor.intoArray(lanes, 0);
            out[(b + r) * rows + o] = sum8(acc, 8 * r) + sum8(lanes);
        }
    }

    /**
     * Scaled activations and block sums (times −8) for every batch row, once per input: a worker
     * keeps them while the same input array, shape and job epoch come back for its next chunk.
     */
    private static void prepare(float[] x, int nRows, int cols, Scratch s) {
        if (s.spanFor == x && s.spanRows == nRows && s.spanCols == cols && s.spanEpoch == s.epoch) return;
        int n = nRows * cols;
        if (s.spanX == null || s.spanX.length < n) {
            s.spanX = new float[n];
            s.spanC = new float[n / 32];
        }
        float[] xs = s.spanX, sb = s.spanC;
        for (int i = 0; i < n; i += 8) {
            FloatVector.fromArray(F, x, i).mul(NIBBLE_SCALE[(i >> 3) & 7]).intoArray(xs, i);
        }
        for (int i = 0; i < n; i += 32) {
            FloatVector.fromArray(F, x, i).add(FloatVector.fromArray(F, x, i + 8)).add(FloatVector.fromArray(F, x, i + 16))
                    .add(FloatVector.fromArray(F, x, i + 24)).intoArray(s.lanes, 0);
            sb[i >> 5] = -8f * sum8(s.lanes);
        }
        s.spanFor = x;
        s.spanRows = nRows;
        s.spanCols = cols;
        s.spanEpoch = s.epoch;
    }

    /** One batch row. Accumulators go to {@code acc[0 ..]}, 8 floats per batch row. */
    private static void row1(MemorySegment m, long off, int nb, int spans, float[] xs, int b, int cols, float[] acc) {
        long w = off + 4L * nb;
        int x0 = b * cols;
        FloatVector a0 = FloatVector.zero(F);
        for (int i = 0; i < spans; i++) {
            IntVector v = IntVector.fromMemorySegment(I, m, w + 32L * i, LE);
            int xo = 64 * i;
            {
                FloatVector q0 = ((FloatVector) v.and(0xF).convert(VectorOperators.I2F, 0)), q1 = ((FloatVector) v.and(0xF0).convert(VectorOperators.I2F, 0));
                FloatVector q2 = ((FloatVector) v.and(0xF00).convert(VectorOperators.I2F, 0)), q3 = ((FloatVector) v.and(0xF000).convert(VectorOperators.I2F, 0));
                FloatVector dd = FloatVector.broadcast(F, m.get(F32, off + 8L * i + 0));
                a0 = q3.fma(FloatVector.fromArray(F, xs, x0 + xo + 24), q2.fma(FloatVector.fromArray(F, xs, x0 + xo + 16),
                        q1.fma(FloatVector.fromArray(F, xs, x0 + xo + 8), q0.mul(FloatVector.fromArray(F, xs, x0 + xo + 0))))).fma(dd, a0);
            }
            {
                FloatVector q0 = ((FloatVector) v.and(0xF0000).convert(VectorOperators.I2F, 0)), q1 = ((FloatVector) v.and(0xF00000).convert(VectorOperators.I2F, 0));
                FloatVector q2 = ((FloatVector) v.and(0xF000000).convert(VectorOperators.I2F, 0)), q3 = ((FloatVector) v.lanewise(VectorOperators.LSHR, 28).convert(VectorOperators.I2F, 0));
                FloatVector dd = FloatVector.broadcast(F, m.get(F32, off + 8L * i + 4));
                a0 = q3.fma(FloatVector.fromArray(F, xs, x0 + xo + 56), q2.fma(FloatVector.fromArray(F, xs, x0 + xo + 48),
                        q1.fma(FloatVector.fromArray(F, xs, x0 + xo + 40), q0.mul(FloatVector.fromArray(F, xs, x0 + xo + 32))))).fma(dd, a0);
            }
        }
        a0.intoArray(acc, 0);
    }

    /** Two batch rows: each span decoded once for both. Accumulators go to {@code acc[0 ..]}, 8 floats per batch row. */
    private static void rows2(MemorySegment m, long off, int nb, int spans, float[] xs, int b, int cols, float[] acc) {
        long w = off + 4L * nb;
        int x0 = b * cols; int x1 = x0 + cols;
        FloatVector a0 = FloatVector.zero(F), a1 = a0;
        for (int i = 0; i < spans; i++) {
            IntVector v = IntVector.fromMemorySegment(I, m, w + 32L * i, LE);
            int xo = 64 * i;
            {
                FloatVector q0 = ((FloatVector) v.and(0xF).convert(VectorOperators.I2F, 0)), q1 = ((FloatVector) v.and(0xF0).convert(VectorOperators.I2F, 0));
                FloatVector q2 = ((FloatVector) v.and(0xF00).convert(VectorOperators.I2F, 0)), q3 = ((FloatVector) v.and(0xF000).convert(VectorOperators.I2F, 0));
                FloatVector dd = FloatVector.broadcast(F, m.get(F32, off + 8L * i + 0));
                a0 = q3.fma(FloatVector.fromArray(F, xs, x0 + xo + 24), q2.fma(FloatVector.fromArray(F, xs, x0 + xo + 16),
                        q1.fma(FloatVector.fromArray(F, xs, x0 + xo + 8), q0.mul(FloatVector.fromArray(F, xs, x0 + xo + 0))))).fma(dd, a0);
                a1 = q3.fma(FloatVector.fromArray(F, xs, x1 + xo + 24), q2.fma(FloatVector.fromArray(F, xs, x1 + xo + 16),
                        q1.fma(FloatVector.fromArray(F, xs, x1 + xo + 8), q0.mul(FloatVector.fromArray(F, xs, x1 + xo + 0))))).fma(dd, a1);
            }
            {
                FloatVector q0 = ((FloatVector) v.and(0xF0000).convert(VectorOperators.I2F, 0)), q1 = ((FloatVector) v.and(0xF00000).convert(VectorOperators.I2F, 0));
                FloatVector q2 = ((FloatVector) v.and(0xF000000).convert(VectorOperators.I2F, 0)), q3 = ((FloatVector) v.lanewise(VectorOperators.LSHR, 28).convert(VectorOperators.I2F, 0));
                FloatVector dd = FloatVector.broadcast(F, m.get(F32, off + 8L * i + 4));
                a0 = q3.fma(FloatVector.fromArray(F, xs, x0 + xo + 56), q2.fma(FloatVector.fromArray(F, xs, x0 + xo + 48),
                        q1.fma(FloatVector.fromArray(F, xs, x0 + xo + 40), q0.mul(FloatVector.fromArray(F, xs, x0 + xo + 32))))).fma(dd, a0);
                a1 = q3.fma(FloatVector.fromArray(F, xs, x1 + xo + 56), q2.fma(FloatVector.fromArray(F, xs, x1 + xo + 48),
                        q1.fma(FloatVector.fromArray(F, xs, x1 + xo + 40), q0.mul(FloatVector.fromArray(F, xs, x1 + xo + 32))))).fma(dd, a1);
            }
        }
        a0.intoArray(acc, 0);
        a1.intoArray(acc, 8);
    }

    /** Four batch rows: each span decoded once for all four. Accumulators go to {@code acc[0 ..]}, 8 floats per batch row. */
    private static void rows4(MemorySegment m, long off, int nb, int spans, float[] xs, int b, int cols, float[] acc) {
        long w = off + 4L * nb;
        int x0 = b * cols; int x1 = x0 + cols; int x2 = x1 + cols; int x3 = x2 + cols;
        FloatVector a0 = FloatVector.zero(F), a1 = a0, a2 = a0, a3 = a0;
        for (int i = 0; i < spans; i++) {
            IntVector v = IntVector.fromMemorySegment(I, m, w + 32L * i, LE);
            int xo = 64 * i;
            {
                FloatVector q0 = ((FloatVector) v.and(0xF).convert(VectorOperators.I2F, 0)), q1 = ((FloatVector) v.and(0xF0).convert(VectorOperators.I2F, 0));
                FloatVector q2 = ((FloatVector) v.and(0xF00).convert(VectorOperators.I2F, 0)), q3 = ((FloatVector) v.and(0xF000).convert(VectorOperators.I2F, 0));
                FloatVector dd = FloatVector.broadcast(F, m.get(F32, off + 8L * i + 0));
                a0 = q3.fma(FloatVector.fromArray(F, xs, x0 + xo + 24), q2.fma(FloatVector.fromArray(F, xs, x0 + xo + 16),
                        q1.fma(FloatVector.fromArray(F, xs, x0 + xo + 8), q0.mul(FloatVector.fromArray(F, xs, x0 + xo + 0))))).fma(dd, a0);
                a1 = q3.fma(FloatVector.fromArray(F, xs, x1 + xo + 24), q2.fma(FloatVector.fromArray(F, xs, x1 + xo + 16),
                        q1.fma(FloatVector.fromArray(F, xs, x1 + xo + 8), q0.mul(FloatVector.fromArray(F, xs, x1 + xo + 0))))).fma(dd, a1);
                a2 = q3.fma(FloatVector.fromArray(F, xs, x2 + xo + 24), q2.fma(FloatVector.fromArray(F, xs, x2 + xo + 16),
                        q1.fma(FloatVector.fromArray(F, xs, x2 + xo + 8), q0.mul(FloatVector.fromArray(F, xs, x2 + xo + 0))))).fma(dd, a2);
                a3 = q3.fma(FloatVector.fromArray(F, xs, x3 + xo + 24), q2.fma(FloatVector.fromArray(F, xs, x3 + xo + 16),
                        q1.fma(FloatVector.fromArray(F, xs, x3 + xo + 8), q0.mul(FloatVector.fromArray(F, xs, x3 + xo + 0))))).fma(dd, a3);
            }
            {
                FloatVector q0 = ((FloatVector) v.and(0xF0000).convert(VectorOperators.I2F, 0)), q1 = ((FloatVector) v.and(0xF00000).convert(VectorOperators.I2F, 0));
                FloatVector q2 = ((FloatVector) v.and(0xF000000).convert(VectorOperators.I2F, 0)), q3 = ((FloatVector) v.lanewise(VectorOperators.LSHR, 28).convert(VectorOperators.I2F, 0));
                FloatVector dd = FloatVector.broadcast(F, m.get(F32, off + 8L * i + 4));
                a0 = q3.fma(FloatVector.fromArray(F, xs, x0 + xo + 56), q2.fma(FloatVector.fromArray(F, xs, x0 + xo + 48),
                        q1.fma(FloatVector.fromArray(F, xs, x0 + xo + 40), q0.mul(FloatVector.fromArray(F, xs, x0 + xo + 32))))).fma(dd, a0);
                a1 = q3.fma(FloatVector.fromArray(F, xs, x1 + xo + 56), q2.fma(FloatVector.fromArray(F, xs, x1 + xo + 48),
                        q1.fma(FloatVector.fromArray(F, xs, x1 + xo + 40), q0.mul(FloatVector.fromArray(F, xs, x1 + xo + 32))))).fma(dd, a1);
                a2 = q3.fma(FloatVector.fromArray(F, xs, x2 + xo + 56), q2.fma(FloatVector.fromArray(F, xs, x2 + xo + 48),
                        q1.fma(FloatVector.fromArray(F, xs, x2 + xo + 40), q0.mul(FloatVector.fromArray(F, xs, x2 + xo + 32))))).fma(dd, a2);
                a3 = q3.fma(FloatVector.fromArray(F, xs, x3 + xo + 56), q2.fma(FloatVector.fromArray(F, xs, x3 + xo + 48),
                        q1.fma(FloatVector.fromArray(F, xs, x3 + xo + 40), q0.mul(FloatVector.fromArray(F, xs, x3 + xo + 32))))).fma(dd, a3);
            }
        }
        a0.intoArray(acc, 0);
        a1.intoArray(acc, 8);
        a2.intoArray(acc, 16);
        a3.intoArray(acc, 24);
    }
}
