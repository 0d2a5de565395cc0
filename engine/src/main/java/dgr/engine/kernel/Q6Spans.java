package dgr.engine.kernel;

import static dgr.engine.kernel.SimdKernels.F;
import static dgr.engine.kernel.SimdKernels.sum8;

import dgr.gguf.GgmlType;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;

/**
 * Q6_K repacked at load into one byte per quant, so a 32-byte load yields four float vectors with
 * one AND and one int-to-float conversion each (the file's split low nibbles and high bit pairs
 * took about eight operations per eight values).
 *
 * <p>Q6_K is, per 16-value sub-block {@code s}, {@code value = s_s·(q − 32)} with {@code q} in
 * 0..63 and {@code s_s = d·sc_s} (f16 times int8: exact in f32, as ggml computes it).
 *
 * <p><b>Layout:</b> a row holds its {@code cols / 256} super-block {@code d} as f32, then its
 * {@code cols / 16} int8 sub-block scales {@code sc} as in the file ({@code s_s = d·sc} is formed
 * in the kernel), then {@code cols / 32} spans of 32 bytes. Span {@code i} covers columns
 * {@code 32i .. 32i+31}; read as eight little-endian ints, byte {@code k} of int {@code j} is the
 * unsigned quant of column {@code 32i + 8k + j}. Bytes 0–1 belong to sub-block {@code 2i}, 2–3 to
 * {@code 2i+1}. That is 8.6 bits per value against the file's 6.56: the row streams 30% more bytes
 * and decodes in under half the operations.
 *
 * <p><b>Why no shifts:</b> as in {@link Q4Spans}: {@code v & (0xFF << 8k)} converts to exactly
 * {@code q·256^k} (a quant is below 64, so even byte 3 stays positive), and the activation chunk is
 * scaled by {@code 256^-k} once per input row (exact for any activation above 2^-102).
 *
 * <p><b>Order per output element</b> (every kernel here, any batch size or worker split): for each
 * span, its two sub-blocks {@code a} and {@code b} each give {@code t = fma(q1, x1, q0·x0)} over
 * their two 8-column chunks (float quants 0..63), then {@code acc = acc + fma(t_a, s_a, t_b·s_b)}.
 * One add per span on the accumulator, not an FMA per sub-block: with sub-blocks of 16 values the
 * accumulator's dependency chain (four FMAs of 4 cycles per 64 values) bounded the batch-1 loop;
 * with one 3-cycle add per 32 values it runs 21% faster on L2-resident weights and 5–12% from
 * memory, the 4-row kernel unchanged (one JVM, alternating). The "− 32" is one more dot product over
 * the row's sub-blocks: {@code cor = fma(32·s[8c..], n[8c..], cor)} for each group of 8, with
 * {@code n_s = −Σ x} over sub-block {@code s} (its two chunks added lane-wise, then
 * {@link SimdKernels#sum8}). Result: {@code sum8(acc) + sum8(cor)}.
 */
final class Q6Spans extends SpanKernels {
    private static final int BLOCK = 210;
    /** Activation scale per byte position: 256^-k. */
    private static final float[] BYTE_SCALE = {1f, 0x1p-8f, 0x1p-16f, 0x1p-24f};

    static final Q6Spans INSTANCE = new Q6Spans();

    private Q6Spans() {}

    /** Whether this matrix can be repacked: Q6_K in file layout. */
    static boolean fits(WeightMatrix w) {
        return w.layout() == WeightLayout.GGML && w.type() == GgmlType.Q6_K && w.cols() % 256 == 0;
    }

    /** Bytes of one repacked row: an f32 d per 256 values, an int8 scale per 16, a byte per value. */
    static long rowBytes(int cols) {
        return cols + cols / 16 + 4L * (cols / 256);
    }

    /** Copies a Q6_K matrix in file layout into byte-span layout in {@code arena}; rows in parallel. */
    static WeightMatrix repack(WeightMatrix w, Arena arena) {
        if (!fits(w)) {
            throw new IllegalArgumentException("tensor '" + w.name() + "' (" + w.type() + ", " + w.layout()
                    + ") cannot be repacked to Q6_K byte spans");
        }
        long outBytes = rowBytes(w.cols());
        MemorySegment dst = repackRows(w, outBytes, arena, () -> {
            int[] q = new int[w.cols()];
            return (in, out) -> { unpackQuants(in, q); pack(in, q, out); };
        });
        return new WeightMatrix(w.name(), w.type(), w.rows(), w.cols(), outBytes, dst, WeightLayout.Q6_K_SPANS);
    }

    /**
     * Q6_K file row, per 210-byte super-block: ql[128], qh[64], int8 scales[16], f16 d. In half
     * {@code n}, position {@code p} (0..127) takes its low nibble from {@code ql[64n + (p & 31) +
     * 32·((p >> 5) & 1)]} (high nibble when {@code p >= 64}) and its top two bits from
     * {@code qh[32n + (p & 31)]} at bit {@code 2·(p >> 5)}; its sub-block is {@code 8n + p / 16}.
     */
    static void unpackQuants(byte[] in, int[] q) {
        for (int blk = 0; blk < q.length / 256; blk++) {
            int o = blk * BLOCK;
            for (int n = 0; n < 2; n++) {
                for (int p = 0; p < 128; p++) {
                    int l = p & 31, g = p >> 5;
                    int lo = (in[o + 64 * n + l + 32 * (g & 1)] & 0xFF) >>> (4 * (g >> 1)) & 15;
                    int hi = ((in[o + 128 + 32 * n + l] & 0xFF) >>> (2 * g)) & 3;
                    q[256 * blk + 128 * n + p] = lo | (hi << 4);
                }
            }
        }
    }

    /** Super-block d as f32, the int8 sub-block scales as they were, then spans (class comment). */
    static void pack(byte[] in, int[] q, byte[] out) {
        int nsb = q.length / 256, p = 0;
        for (int blk = 0; blk < nsb; blk++) p = putInt(out, p, Float.floatToRawIntBits(RowDecoder.f16le(in, blk * BLOCK + 208)));
        for (int blk = 0; blk < nsb; blk++) {
            for (int s = 0; s < 16; s++) out[p++] = in[blk * BLOCK + 192 + s];
        }
        for (int i = 0; i < q.length / 32; i++) {
            for (int j = 0; j < 8; j++) {
                for (int k = 0; k < 4; k++) out[p++] = (byte) q[32 * i + 8 * k + j];
            }
        }
    }


    static void matmul(WeightMatrix w, float[] x, int nRows, float[] out, int oStart, int oEnd, Scratch s) {
        int cols = w.cols();
        INSTANCE.walk(w, cols / 64 + cols / 16, cols / 32, prepare(x, nRows, cols, s), nRows, out, oStart, oEnd, s);
    }

    /**
     * {@code out = sum8(acc) + sum8(cor)}, {@code cor} the offsets' dot product with the negated
     * sub-block sums; the offsets {@code 32·d·sc} are {@link #rowScales}' products times 32 (exact:
     * {@code d·sc} is exact in f32 and 32 a power of two, so the same bits as {@code sc·(32·d)}).
     */
    @Override
    void finish(MemorySegment m, long off, int cols, float[] sb, float[] acc, int b, int n, float[] out, int rows, int o,
                float[] lanes) {
        int ns = cols / 16;
        for (int r = 0; r < n; r++) {
            FloatVector cor = FloatVector.zero(F);
            for (int j = 0, so = (b + r) * ns; j < ns; j += 8) {
                cor = FloatVector.fromArray(F, acc, 32 + j).mul(32f).fma(FloatVector.fromArray(F, sb, so + j), cor);
            }
            cor.intoArray(lanes, 0);
            out[(b + r) * rows + o] = sum8(acc, 8 * r) + sum8(lanes);
        }
    }

    /**
     * Scaled activations and negated sub-block sums for every batch row, once per input and worker
     * ({@link SpanInput}).
     */
    private static SpanInput prepare(float[] x, int nRows, int cols, Scratch s) {
        return s.bytes.prepare(x, nRows, cols, s.epoch, BYTE_SCALE, 16, s.lanes);
    }

    /**
     * The row's sub-block scales {@code d·sc} into {@code acc[32 ..]}, eight per vector operation,
     * so the span loops read each with one broadcast load instead of two scalar loads, a
     * conversion and a multiply (the same f32 product, so the same bits).
     */
    @Override
    void rowScales(MemorySegment m, long off, int cols, float[] acc) {
        long scl = off + cols / 64; // the int8 scales follow cols/64 bytes of d
        for (int g = 0; g < cols / 256; g++) {
            float d = m.get(F32, off + 4L * g);
            for (int h = 0; h < 2; h++) {
                ((FloatVector) ByteVector.fromMemorySegment(B64, m, scl + 16L * g + 8 * h, LE).convertShape(VectorOperators.B2I, I, 0)
                        .convert(VectorOperators.I2F, 0)).mul(d).intoArray(acc, 32 + 16 * g + 8 * h);
            }
        }
    }

    /**
     * One batch row. Accumulators go to {@code acc[0 ..]}, 8 floats per batch row. Two spans per
     * iteration (spans come in multiples of 8): with one, C2 unrolled the small loop four times and
     * then reloaded its masks from the constant pool at every use and spilled the broadcast scales;
     * the two-span body keeps them in registers, 12–17% faster on L2-resident weights and 5–10%
     * from memory (one JVM, alternating).
     */
    @Override
    void row1(MemorySegment m, long off, long w, int spans, float[] xs, int b, int cols, float[] acc) {
        int x0 = SpanInput.PAD + b * cols;
        FloatVector a0 = FloatVector.zero(F);
        for (int i = 0; i < spans; i += 2) {
            IntVector v = IntVector.fromMemorySegment(I, m, w + 32L * i, LE);
            int xo = 32 * i;
            {
                FloatVector q0 = ((FloatVector) v.and(0xFF).convert(VectorOperators.I2F, 0)), q1 = ((FloatVector) v.and(0xFF00).convert(VectorOperators.I2F, 0));
                FloatVector q2 = ((FloatVector) v.and(0xFF0000).convert(VectorOperators.I2F, 0)), q3 = ((FloatVector) v.and(0xFF000000).convert(VectorOperators.I2F, 0));
                FloatVector sa = FloatVector.broadcast(F, acc[32 + 2 * i]), sb = FloatVector.broadcast(F, acc[32 + 2 * i + 1]);
                FloatVector ta = q1.fma(FloatVector.fromArray(F, xs, x0 + xo + 8), q0.mul(FloatVector.fromArray(F, xs, x0 + xo)));
                FloatVector tb = q3.fma(FloatVector.fromArray(F, xs, x0 + xo + 24), q2.mul(FloatVector.fromArray(F, xs, x0 + xo + 16)));
                a0 = a0.add(ta.fma(sa, tb.mul(sb)));
            }
            v = IntVector.fromMemorySegment(I, m, w + 32L * i + 32, LE);
            xo = 32 * i + 32;
            {
                FloatVector q0 = ((FloatVector) v.and(0xFF).convert(VectorOperators.I2F, 0)), q1 = ((FloatVector) v.and(0xFF00).convert(VectorOperators.I2F, 0));
                FloatVector q2 = ((FloatVector) v.and(0xFF0000).convert(VectorOperators.I2F, 0)), q3 = ((FloatVector) v.and(0xFF000000).convert(VectorOperators.I2F, 0));
                FloatVector sa = FloatVector.broadcast(F, acc[32 + 2 * i + 2]), sb = FloatVector.broadcast(F, acc[32 + 2 * i + 3]);
                FloatVector ta = q1.fma(FloatVector.fromArray(F, xs, x0 + xo + 8), q0.mul(FloatVector.fromArray(F, xs, x0 + xo)));
                FloatVector tb = q3.fma(FloatVector.fromArray(F, xs, x0 + xo + 24), q2.mul(FloatVector.fromArray(F, xs, x0 + xo + 16)));
                a0 = a0.add(ta.fma(sa, tb.mul(sb)));
            }
        }
        a0.intoArray(acc, 0);
    }

    /** Two batch rows: each span decoded once for both. Accumulators go to {@code acc[0 ..]}, 8 floats per batch row. */
    @Override
    void rows2(MemorySegment m, long off, long w, int spans, float[] xs, int b, int cols, float[] acc) {
        int x0 = SpanInput.PAD + b * cols; int x1 = x0 + cols;
        FloatVector a0 = FloatVector.zero(F), a1 = a0;
        for (int i = 0; i < spans; i++) {
            IntVector v = IntVector.fromMemorySegment(I, m, w + 32L * i, LE);
            int xo = 32 * i;
            FloatVector q0 = ((FloatVector) v.and(0xFF).convert(VectorOperators.I2F, 0)), q1 = ((FloatVector) v.and(0xFF00).convert(VectorOperators.I2F, 0));
            FloatVector q2 = ((FloatVector) v.and(0xFF0000).convert(VectorOperators.I2F, 0)), q3 = ((FloatVector) v.and(0xFF000000).convert(VectorOperators.I2F, 0));
            FloatVector sa = FloatVector.broadcast(F, acc[32 + 2 * i]), sb = FloatVector.broadcast(F, acc[32 + 2 * i + 1]);
            a0 = a0.add(q1.fma(FloatVector.fromArray(F, xs, x0 + xo + 8), q0.mul(FloatVector.fromArray(F, xs, x0 + xo)))
                    .fma(sa, q3.fma(FloatVector.fromArray(F, xs, x0 + xo + 24), q2.mul(FloatVector.fromArray(F, xs, x0 + xo + 16))).mul(sb)));
            a1 = a1.add(q1.fma(FloatVector.fromArray(F, xs, x1 + xo + 8), q0.mul(FloatVector.fromArray(F, xs, x1 + xo)))
                    .fma(sa, q3.fma(FloatVector.fromArray(F, xs, x1 + xo + 24), q2.mul(FloatVector.fromArray(F, xs, x1 + xo + 16))).mul(sb)));
        }
        a0.intoArray(acc, 0);
        a1.intoArray(acc, 8);
    }

    /** Four batch rows: each span decoded once for all four. Accumulators go to {@code acc[0 ..]}, 8 floats per batch row. */
    @Override
    void rows4(MemorySegment m, long off, long w, int spans, float[] xs, int b, int cols, float[] acc) {
        int x0 = SpanInput.PAD + b * cols; int x1 = x0 + cols; int x2 = x1 + cols; int x3 = x2 + cols;
        FloatVector a0 = FloatVector.zero(F), a1 = a0, a2 = a0, a3 = a0;
        for (int i = 0; i < spans; i++) {
            IntVector v = IntVector.fromMemorySegment(I, m, w + 32L * i, LE);
            int xo = 32 * i;
            FloatVector q0 = ((FloatVector) v.and(0xFF).convert(VectorOperators.I2F, 0)), q1 = ((FloatVector) v.and(0xFF00).convert(VectorOperators.I2F, 0));
            FloatVector q2 = ((FloatVector) v.and(0xFF0000).convert(VectorOperators.I2F, 0)), q3 = ((FloatVector) v.and(0xFF000000).convert(VectorOperators.I2F, 0));
            FloatVector sa = FloatVector.broadcast(F, acc[32 + 2 * i]), sb = FloatVector.broadcast(F, acc[32 + 2 * i + 1]);
            a0 = a0.add(q1.fma(FloatVector.fromArray(F, xs, x0 + xo + 8), q0.mul(FloatVector.fromArray(F, xs, x0 + xo)))
                    .fma(sa, q3.fma(FloatVector.fromArray(F, xs, x0 + xo + 24), q2.mul(FloatVector.fromArray(F, xs, x0 + xo + 16))).mul(sb)));
            a1 = a1.add(q1.fma(FloatVector.fromArray(F, xs, x1 + xo + 8), q0.mul(FloatVector.fromArray(F, xs, x1 + xo)))
                    .fma(sa, q3.fma(FloatVector.fromArray(F, xs, x1 + xo + 24), q2.mul(FloatVector.fromArray(F, xs, x1 + xo + 16))).mul(sb)));
            a2 = a2.add(q1.fma(FloatVector.fromArray(F, xs, x2 + xo + 8), q0.mul(FloatVector.fromArray(F, xs, x2 + xo)))
                    .fma(sa, q3.fma(FloatVector.fromArray(F, xs, x2 + xo + 24), q2.mul(FloatVector.fromArray(F, xs, x2 + xo + 16))).mul(sb)));
            a3 = a3.add(q1.fma(FloatVector.fromArray(F, xs, x3 + xo + 8), q0.mul(FloatVector.fromArray(F, xs, x3 + xo)))
                    .fma(sa, q3.fma(FloatVector.fromArray(F, xs, x3 + xo + 24), q2.mul(FloatVector.fromArray(F, xs, x3 + xo + 16))).mul(sb)));
        }
        a0.intoArray(acc, 0);
        a1.intoArray(acc, 8);
        a2.intoArray(acc, 16);
        a3.intoArray(acc, 24);
    }
}
