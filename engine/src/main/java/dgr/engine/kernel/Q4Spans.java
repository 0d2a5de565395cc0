package dgr.engine.kernel;

import static dgr.engine.kernel.SimdKernels.F;
import static jdk.incubator.vector.VectorOperators.I2F;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import dgr.gguf.GgmlType;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;

/**
 * 4-bit weights (Q4_0, Q4_1 and Q4_K) repacked at load so that one 32-byte load yields eight float
 * vectors with about one integer operation each and no conversion, instead of the byte widening,
 * masking, shifting and offsets of the file layouts.
 *
 * <p>Both formats are, per 32-value block {@code b}, {@code value = s_b·q − o_b} with an unsigned
 * quant {@code q} in 0..15: Q4_0 has {@code s_b = d}, {@code o_b = 8·d}; Q4_1 {@code s_b = d},
 * {@code o_b = −m}; Q4_K has
 * {@code s_b = d·sc_j}, {@code o_b = dmin·m_j} for sub-block {@code j} of its super-block (both
 * products exact in f32, as ggml computes them).
 *
 * <p><b>Layout:</b> a row of {@code nb} blocks starts with its scales: Q4_0 the {@code nb} f16
 * {@code d} as in the file; Q4_K its {@code nb/8} super-block {@code d} as f32, then the
 * {@code nb/8} {@code dmin} as f32, then one byte per block of 6-bit scale {@code sc}, then one of
 * min {@code m}. Then come {@code nb / 2} spans of 32 bytes. Span {@code i} covers columns
 * {@code 64i .. 64i+63}; read as eight little-endian ints, nibble {@code k} (bits {@code 4k..4k+3})
 * of int {@code j} is the quant of column {@code 64i + 8k + j}. Nibbles 0–3 belong to block
 * {@code 2i}, 4–7 to {@code 2i+1}. Q4_0 stays at 4.5 bits per value, Q4_K takes 4.75 (file: 4.5):
 * at batch 1 decode time follows the bytes streamed (f32 scales and offsets per block, 6 bits per
 * value, made Q4_K 45% slower than Q4_0 per matrix), while the scale products cost two scalar
 * operations per block.
 *
 * <p><b>Decoding.</b> Nibble {@code k} is isolated in place: {@code v & (0xF << 4k)} for
 * {@code k ≤ 3}, then from {@code u = v >>> 16} with the same four masks for nibbles 4–7: an int
 * {@code q·2^e} with {@code e = 4·(k mod 4)}, below 2^24, converted to float exactly. (Four masks,
 * not six: with six, C2 reloaded three of them from the constant pool in every iteration for want
 * of registers; four measured 2–3% faster at batch 1 and 4, alternating in one JVM. Nibble 7 was
 * {@code v >>> 28} while the nibbles were read as subnormals.) Each activation chunk is scaled once per input row
 * by {@code 2^-e} (a power of two: exact for activations above 2^-114), so every product is the
 * rounded {@code q·x}.
 *
 * <p>Until 2026-12 the ints' bits were read as subnormal floats ({@code q·2^e·2^-149}) with
 * activations scaled by {@code 2^(85−e)}, which saved the conversion and made batch 1 10–20%
 * faster on AMD Zen 3, where an FMA takes a subnormal operand at full speed. On Intel every such
 * FMA takes a microcode assist: on a Sapphire Rapids-class VM the same kernels ran 60× slower
 * (0.5 against 30 GFLOP/s per thread). The products then were the same values times 2^-64, so
 * results are the same bits wherever both were normal floats.
 *
 * <p><b>Order per output element</b> (every kernel here, any batch size or worker split), with
 * {@code x_k} the scaled chunks of a block:
 * <ul>
 *   <li>Both: {@code t = q0·x0}, {@code t = fma(q1, x1, t)}, {@code fma(q2, x2, t)},
 *       {@code fma(q3, x3, t)}, then {@code acc = fma(t, s_b, acc)}; the offsets are one more dot
 *       product over the row's blocks, {@code cor = fma(c[8g..], n[8g..], cor)} for each group of
 *       8 blocks, {@code n_b = −Σ x} over block {@code b} (lanes of its four chunks added in
 *       order, then {@link SimdKernels#sum8}). Result: {@code sum8(acc) + k·sum8(cor)}. (A
 *       chain once started {@code fma(q0, x0, 0)}, which differs from the product only in the
 *       sign of a zero, and that never reaches the result: {@code acc} starts at +0, and
 *       {@code fma(±0, s_b, acc)} is {@code acc}.)</li>
 *   <li>Q4_0: {@code s_b = d_b} and {@code c_b = d_b} with {@code k = 8} (the "− 8"); Q4_K:
 *       {@code s_b = d·sc_b}, {@code c_b = dmin·m_b}, {@code k = 1}. Each format's
 *       {@code rowScales} writes {@code s} and {@code c} once per weight row. (Q4_0 used to start
 *       each block's chain from an 8-float offset vector instead; the separate dot product saves
 *       two activation loads per span: the 4-row kernel 7–14% faster, batch 1 a few per cent,
 *       one JVM alternating.)</li>
 * </ul>
 * One accumulator per batch row, so four rows fit the 16 AVX2 registers when a block is decoded
 * once for four rows.
 */
abstract sealed class Q4Spans extends SpanKernels {
    /** Activation scale per nibble position: 2^-e, {@code e} where the nibble's quant sits once isolated. */
    private static final float[] NIBBLE_SCALE = {1f, 0x1p-4f, 0x1p-8f, 0x1p-12f};

    /** The three formats: each class supplies its {@code rowScales} and where its offsets sit; the kernels are shared. */
    static final Q4Spans Q4_0 = new Zero(), Q4_K = new K(), Q4_1 = new One();

    /**
     * Whether this matrix can be repacked: Q4_0, Q4_1 or Q4_K in file layout, whole groups of 8
     * blocks, and (Q4_0, Q4_1) every f16 scale and min finite ({@link #finiteScales}).
     */
    static boolean fits(WeightMatrix w) {
        if (w.layout() != WeightLayout.GGML || w.cols() % 256 != 0) return false;
        return switch (w.type()) {
            case Q4_K -> true;
            case Q4_0, Q4_1 -> finiteScales(w);
            default -> false;
        };
    }

    /** Whether a matrix in {@code layout} runs on these kernels. */
    static boolean handles(WeightLayout layout) {
        return layout == WeightLayout.Q4_0_SPANS || layout == WeightLayout.Q4_1_SPANS || layout == WeightLayout.Q4_K_SPANS;
    }

    /** Copies a Q4_0, Q4_1 or Q4_K matrix in file layout into span layout in {@code arena}; rows in parallel. */
    static WeightMatrix repack(WeightMatrix w, Arena arena) {
        if (!fits(w)) {
            throw new IllegalArgumentException("tensor '" + w.name() + "' (" + w.type() + ", " + w.cols()
                    + " columns, " + w.layout() + ") cannot be repacked to 4-bit spans");
        }
        GgmlType type = w.type();
        long outBytes = rowBytes(type, w.cols());
        MemorySegment dst = repackRows(w, outBytes, arena, () -> {
            int[] q = new int[w.cols()];
            return switch (type) {
                case Q4_0 -> (in, out) -> packQ4_01(in, q, out, false);
                case Q4_1 -> (in, out) -> packQ4_01(in, q, out, true);
                default -> (in, out) -> packQ4_K(in, q, out);
            };
        });
        WeightLayout layout = switch (type) {
            case Q4_0 -> WeightLayout.Q4_0_SPANS;
            case Q4_1 -> WeightLayout.Q4_1_SPANS;
            default -> WeightLayout.Q4_K_SPANS;
        };
        return new WeightMatrix(w.name(), type, w.rows(), w.cols(), outBytes, dst, layout);
    }


    /**
     * Whether every f16 scale (and Q4_1 min) of a file-layout Q4_0 or Q4_1 matrix is finite: the
     * span kernels convert them with bit operations that are exact for finite f16 only
     * ({@link #f16x8}), so a matrix with an infinite or NaN one stays in file layout, where
     * {@code Float.float16ToFloat} keeps it.
     */
    static boolean finiteScales(WeightMatrix w) {
        // Q4_1 blocks: f16 d and m, then 16 bytes; Q4_0: f16 d, then 16 bytes.
        return w.type() == GgmlType.Q4_1 ? finiteF16(w, 20, 0, 2) : finiteF16(w, 18, 0);
    }
    /**
     * Bytes of one repacked row, 16 bytes of quants per block plus: Q4_0 its f16 scale; Q4_1 its
     * f16 scale and min; Q4_K a byte each of scale and min, and an f32 d and dmin per 8 blocks.
     */
    static long rowBytes(GgmlType type, int cols) {
        return (type == GgmlType.Q4_K ? 19L : type == GgmlType.Q4_1 ? 20L : 18L) * (cols / 32);
    }


    /**
     * Q4_K file row to span layout. Per 144-byte super-block the file has f16 d, f16 dmin, 12 bytes
     * of 6-bit scales and mins (ggml's get_scale_min_k4 packing) and 128 bytes where byte
     * {@code 32p + i} holds value {@code i} of sub-block {@code 2p} (low nibble) and of sub-block
     * {@code 2p+1} (high nibble). Written: all d as f32, all dmin as f32, one byte per block of
     * scale, one of min, then the spans.
     */
    static void packQ4_K(byte[] in, int[] q, byte[] out) {
        int nsb = q.length / 256, nb = 8 * nsb;
        MemorySegment packed = MemorySegment.ofArray(in);
        for (int sbk = 0; sbk < nsb; sbk++) {
            int o = sbk * 144;
            putInt(out, 4 * sbk, Float.floatToRawIntBits(RowDecoder.f16le(in, o)));
            putInt(out, nb / 2 + 4 * sbk, Float.floatToRawIntBits(RowDecoder.f16le(in, o + 2)));
            for (int j = 0; j < 8; j++) {
                int s6 = RowDecoder.scaleMinK4(packed, o + 4, j, 0), m6 = RowDecoder.scaleMinK4(packed, o + 4, j, 1);
                out[nb + 8 * sbk + j] = (byte) s6;
                out[2 * nb + 8 * sbk + j] = (byte) m6;
                int qs = o + 16 + 32 * (j / 2), shift = 4 * (j % 2);
                for (int i = 0; i < 32; i++) q[256 * sbk + 32 * j + i] = ((in[qs + i] & 0xFF) >>> shift) & 15;
            }
        }
        packSpans(q, out, 3 * nb);
    }

    /**
     * Copies block {@code b}'s f16 d (and, with {@code mins}, its f16 m) from the file block at
     * {@code in[o..]} to the span layout's areas: all d first, then all m, as the file had them.
     */
    static void copyScales(byte[] in, int o, byte[] out, int b, int nb, boolean mins) {
        out[2 * b] = in[o];
        out[2 * b + 1] = in[o + 1];
        if (mins) {
            out[2 * (nb + b)] = in[o + 2];
            out[2 * (nb + b) + 1] = in[o + 3];
        }
    }

    /**
     * Q4_0 file row (per 18-byte block an f16 d and 16 bytes, low nibbles first) or Q4_1 (20-byte
     * blocks: f16 d, f16 m, then the same) to span layout: all d, then (Q4_1) all m, as they were,
     * then the spans.
     */
    static void packQ4_01(byte[] in, int[] q, byte[] out, boolean mins) {
        int nb = q.length / 32, block = mins ? 20 : 18, h = mins ? 4 : 2;
        for (int b = 0; b < nb; b++) {
            int o = b * block;
            copyScales(in, o, out, b, nb, mins);
            for (int p = 0; p < 16; p++) {
                int v = in[o + h + p] & 0xFF;
                q[32 * b + p] = v & 15;
                q[32 * b + p + 16] = v >>> 4;
            }
        }
        packSpans(q, out, h * nb);
    }

    /** Quants (0..15, column order) into spans from {@code out[p]}: nibble k of int j is column 8k + j. */
    private static void packSpans(int[] q, byte[] out, int p) {
        for (int i = 0; i < q.length / 64; i++) {
            for (int j = 0; j < 8; j++) {
                int v = 0;
                for (int k = 0; k < 8; k++) v |= q[64 * i + 8 * k + j] << (4 * k);
                p = putInt(out, p, v);
            }
        }
    }

    static void matmul(WeightMatrix w, float[] x, int nRows, float[] out, int oStart, int oEnd, Scratch s) {
        Q4Spans f = switch (w.layout()) {
            case Q4_K_SPANS -> Q4_K;
            case Q4_1_SPANS -> Q4_1;
            default -> Q4_0;
        };
        // The spans are a row's last cols / 2 bytes, after its scales.
        f.walk(w, w.rowBytes() - w.cols() / 2, w.cols() / 64, prepare(x, nRows, w.cols(), s), nRows, out, oStart, oEnd, s);
    }

    /** Scaled activations and negated block sums for every batch row, once per input and worker ({@link SpanInput}). */
    private static SpanInput prepare(float[] x, int nRows, int cols, Scratch s) {
        return s.nibbles.prepare(x, nRows, cols, s.epoch, NIBBLE_SCALE, 32, s.lanes);
    }

    /**
     * Where the format's {@link #rowScales} leaves the offsets {@code c_b} (after the {@code nb}
     * scales, or in their place for Q4_0, whose offsets are its scales) and their factor {@code k};
     * {@link #finish} then gives {@code sum8(acc) + k·sum8(cor)}. Everything else, the kernels
     * included, the formats share.
     */
    private Q4Spans(boolean offsetsAfterScales, float offsetFactor) {
        super(32, offsetsAfterScales, 1f, offsetFactor);
    }

    // An isolated nibble q·2^e (below 2^24, so exact) becomes a float by conversion (I2F), not by its bits
    // read as a subnormal float, as these kernels once did: Intel cores take a microcode assist for every
    // FMA with a subnormal operand (a Sapphire Rapids-class VM ran them 60× slower), and the results must
    // not depend on which CPU a node has. Written out at each use rather than in a helper: no vector
    // crosses a call (Exp says why; these kernels are large enough to reach C2's node cutoff).

    /** One batch row. Accumulators go to {@code acc[0 ..]}, 8 floats per batch row. */
    @Override
    final void row1(MemorySegment m, long off, long w, int spans, float[] xs, int b, int cols, float[] acc) {
        int x0 = SpanInput.PAD + b * cols;
        FloatVector a0 = FloatVector.zero(F);
        for (int i = 0; i < spans; i++) {
            IntVector v = IntVector.fromMemorySegment(I, m, w + 32L * i, LE);
            int xo = 64 * i;
            {
                FloatVector q0 = (FloatVector) v.and(0xF).convert(I2F, 0), q1 = (FloatVector) v.and(0xF0).convert(I2F, 0);
                FloatVector q2 = (FloatVector) v.and(0xF00).convert(I2F, 0), q3 = (FloatVector) v.and(0xF000).convert(I2F, 0);
                FloatVector dd = FloatVector.broadcast(F, acc[32 + 2 * i]);
                a0 = q3.fma(FloatVector.fromArray(F, xs, x0 + xo + 24), q2.fma(FloatVector.fromArray(F, xs, x0 + xo + 16),
                        q1.fma(FloatVector.fromArray(F, xs, x0 + xo + 8), q0.mul(FloatVector.fromArray(F, xs, x0 + xo + 0))))).fma(dd, a0);
            }
            {
                IntVector u = v.lanewise(VectorOperators.LSHR, 16);
                FloatVector q0 = (FloatVector) u.and(0xF).convert(I2F, 0), q1 = (FloatVector) u.and(0xF0).convert(I2F, 0);
                FloatVector q2 = (FloatVector) u.and(0xF00).convert(I2F, 0), q3 = (FloatVector) u.and(0xF000).convert(I2F, 0);
                FloatVector dd = FloatVector.broadcast(F, acc[32 + 2 * i + 1]);
                a0 = q3.fma(FloatVector.fromArray(F, xs, x0 + xo + 56), q2.fma(FloatVector.fromArray(F, xs, x0 + xo + 48),
                        q1.fma(FloatVector.fromArray(F, xs, x0 + xo + 40), q0.mul(FloatVector.fromArray(F, xs, x0 + xo + 32))))).fma(dd, a0);
            }
        }
        a0.intoArray(acc, 0);
    }

    /** Two batch rows: each block decoded once for both, walked as {@link #rows4} is (and for the same reason). Accumulators go to {@code acc[0 ..]}, 8 floats per batch row. */
    @Override
    final void rows2(MemorySegment m, long off, long w, int spans, float[] xs, int b, int cols, float[] acc) {
        int x0 = SpanInput.PAD + b * cols; int x1 = x0 + cols;
        FloatVector a0 = FloatVector.zero(F), a1 = a0;
        for (int i = 0; i < 2 * spans; i++) {
            IntVector v = IntVector.fromMemorySegment(I, m, w + 16L * (i & ~1), LE).lanewise(VectorOperators.LSHR, 16 * (i & 1));
            int xo = 32 * i;
            FloatVector q0 = (FloatVector) v.and(0xF).convert(I2F, 0), q1 = (FloatVector) v.and(0xF0).convert(I2F, 0);
            FloatVector q2 = (FloatVector) v.and(0xF00).convert(I2F, 0), q3 = (FloatVector) v.and(0xF000).convert(I2F, 0);
            FloatVector dd = FloatVector.broadcast(F, acc[32 + i]);
            a0 = q3.fma(FloatVector.fromArray(F, xs, x0 + xo + 24), q2.fma(FloatVector.fromArray(F, xs, x0 + xo + 16),
                    q1.fma(FloatVector.fromArray(F, xs, x0 + xo + 8), q0.mul(FloatVector.fromArray(F, xs, x0 + xo))))).fma(dd, a0);
            a1 = q3.fma(FloatVector.fromArray(F, xs, x1 + xo + 24), q2.fma(FloatVector.fromArray(F, xs, x1 + xo + 16),
                    q1.fma(FloatVector.fromArray(F, xs, x1 + xo + 8), q0.mul(FloatVector.fromArray(F, xs, x1 + xo))))).fma(dd, a1);
        }
        a0.intoArray(acc, 0);
        a1.intoArray(acc, 8);
    }

    /**
     * Four batch rows: each block decoded once for all four. Accumulators go to {@code acc[0 ..]},
     * 8 floats per batch row. It walks blocks, not spans (block {@code 2i+1} reads span {@code i}
     * shifted right by 16, so its four nibbles sit where block {@code 2i}'s do): written per span,
     * the method outgrew C2's node budget for inlining once the nibbles were converted, left the
     * last conversions as calls and ran 6× slower.
     */
    @Override
    final void rows4(MemorySegment m, long off, long w, int spans, float[] xs, int b, int cols, float[] acc) {
        int x0 = SpanInput.PAD + b * cols; int x1 = x0 + cols; int x2 = x1 + cols; int x3 = x2 + cols;
        FloatVector a0 = FloatVector.zero(F), a1 = a0, a2 = a0, a3 = a0;
        for (int i = 0; i < 2 * spans; i++) {
            IntVector v = IntVector.fromMemorySegment(I, m, w + 16L * (i & ~1), LE).lanewise(VectorOperators.LSHR, 16 * (i & 1));
            int xo = 32 * i;
            FloatVector q0 = (FloatVector) v.and(0xF).convert(I2F, 0), q1 = (FloatVector) v.and(0xF0).convert(I2F, 0);
            FloatVector q2 = (FloatVector) v.and(0xF00).convert(I2F, 0), q3 = (FloatVector) v.and(0xF000).convert(I2F, 0);
            FloatVector dd = FloatVector.broadcast(F, acc[32 + i]);
            a0 = q3.fma(FloatVector.fromArray(F, xs, x0 + xo + 24), q2.fma(FloatVector.fromArray(F, xs, x0 + xo + 16),
                    q1.fma(FloatVector.fromArray(F, xs, x0 + xo + 8), q0.mul(FloatVector.fromArray(F, xs, x0 + xo))))).fma(dd, a0);
            a1 = q3.fma(FloatVector.fromArray(F, xs, x1 + xo + 24), q2.fma(FloatVector.fromArray(F, xs, x1 + xo + 16),
                    q1.fma(FloatVector.fromArray(F, xs, x1 + xo + 8), q0.mul(FloatVector.fromArray(F, xs, x1 + xo))))).fma(dd, a1);
            a2 = q3.fma(FloatVector.fromArray(F, xs, x2 + xo + 24), q2.fma(FloatVector.fromArray(F, xs, x2 + xo + 16),
                    q1.fma(FloatVector.fromArray(F, xs, x2 + xo + 8), q0.mul(FloatVector.fromArray(F, xs, x2 + xo))))).fma(dd, a2);
            a3 = q3.fma(FloatVector.fromArray(F, xs, x3 + xo + 24), q2.fma(FloatVector.fromArray(F, xs, x3 + xo + 16),
                    q1.fma(FloatVector.fromArray(F, xs, x3 + xo + 8), q0.mul(FloatVector.fromArray(F, xs, x3 + xo))))).fma(dd, a3);
        }
        a0.intoArray(acc, 0);
        a1.intoArray(acc, 8);
        a2.intoArray(acc, 16);
        a3.intoArray(acc, 24);
    }

    /** Q4_0: scales {@code d}, and the "− 8" as {@code 8·Σ d_b·n_b} from the same {@code d}. */
    private static final class Zero extends Q4Spans {
        Zero() {
            super(false, 8f);
        }

        /**
         * The row's f16 scales as f32 into {@code acc[32 ..]}, eight per vector operation, by the
         * exact bit conversion {@link #f16x8}. Only matrices whose scales are all finite are
         * repacked ({@link #finiteScales}).
         */
        @Override
        void rowScales(MemorySegment m, long off, int cols, float[] acc) {
            for (int j = 0; j < cols / 32; j += 8) f16x8(m, off + 2L * j, 0x1p112f, acc, 32 + j);
        }
    }

    /** Q4_1: {@code value = d·q + m}, so scales {@code d} and offsets {@code −m}, factor 1. */
    private static final class One extends Q4Spans {
        One() {
            super(true, 1f);
        }

        /**
         * The row's f16 {@code d} into {@code acc[32 ..]} and {@code −m} after them, eight per vector
         * operation, by the exact bit conversion {@link #f16x8} (negating is exact too). Only
         * matrices whose {@code d} and {@code m} are all finite are repacked.
         */
        @Override
        void rowScales(MemorySegment m, long off, int cols, float[] acc) {
            int nb = cols / 32;
            for (int j = 0; j < nb; j += 8) {
                f16x8(m, off + 2L * j, 0x1p112f, acc, 32 + j);
                f16x8(m, off + 2L * (nb + j), -0x1p112f, acc, 32 + nb + j);
            }
        }
    }

    /** Q4_K: per-block scale {@code d·sc}; the mins {@code dmin·m} after them, factor 1. */
    private static final class K extends Q4Spans {
        K() {
            super(true, 1f);
        }

        /**
         * The row's block scales {@code d·sc} into {@code acc[32 ..]} and its mins {@code dmin·m}
         * into {@code acc[32 + nb ..]}, eight (one super-block) per vector operation: the span loops
         * read each scale with one broadcast load instead of two scalar loads, a conversion and a
         * multiply, and {@code finish} reads the mins once per batch row instead of decoding them
         * again (the same f32 products, so the same bits; {@code finish} had taken about 40% as
         * long as the batch-1 loop, segment accesses outside a hot loop).
         */
        @Override
        void rowScales(MemorySegment m, long off, int cols, float[] acc) {
            int nb = cols / 32;
            for (int g = 0; g < nb / 8; g++) {
                ((FloatVector) ByteVector.fromMemorySegment(B64, m, off + nb + 8L * g, LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, I, 0)
                        .convert(VectorOperators.I2F, 0)).mul(m.get(F32, off + 4L * g)).intoArray(acc, 32 + 8 * g);
                ((FloatVector) ByteVector.fromMemorySegment(B64, m, off + 2L * nb + 8L * g, LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, I, 0)
                        .convert(VectorOperators.I2F, 0)).mul(m.get(F32, off + nb / 2 + 4L * g)).intoArray(acc, 32 + nb + 8 * g);
            }
        }
    }
}
