package dgr.engine.kernel;

import static dgr.engine.kernel.SimdKernels.F;

import dgr.gguf.GgmlType;
import dgr.gguf.codec.Iq4Fit;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShuffle;

/**
 * Q6_K, Q5_K, Q3_K, Q2_K, Q5_0, Q5_1, IQ4_XS, IQ4_NL, MXFP4, TQ1_0/TQ2_0 and the IQ1/IQ2/IQ3 types repacked at load into one byte per quant, so a 32-byte load
 * yields four float vectors with one AND and one int-to-float conversion each (Q6_K's split low
 * nibbles and high bits took about eight operations per eight values; the others had no fused
 * kernel at all and ran through row decoding, 12× slower than llama.cpp at batch 1 on llama-1b
 * Q5_K_M).
 *
 * <p>All are, per 16-value group {@code g}, {@code value = s_g·q − o_g} with an unsigned quant
 * {@code q} (Q6_K 0..63, Q5_K, Q5_0 and Q5_1 0..31, Q3_K 0..7, Q2_K 0..3, the IQ4 types' grid value
 * + 128, 1..241, MXFP4's doubled E2M1 point + 128, 116..140). Symmetric: Q6_K has {@code s_g = d·sc_g}, {@code o_g = 32·s_g}; Q3_K
 * {@code s_g = d·(sc_g − 32)}, {@code o_g = 4·s_g}; IQ4_XS {@code s_g = d·(ls_j − 32)} for the
 * 32-value sub-block {@code j} holding {@code g}, {@code o_g = 128·s_g}; the IQ1/IQ2/IQ3 types the
 * same from their integer form ({@link dgr.gguf.codec.IntegerBlock}: {@code s_g = d·scale_g},
 * quant {@code q + 128}, 66..190); TQ1_0/TQ2_0 {@code s_g = d}, {@code o_g = s_g}.
 * With mins: Q5_K has {@code s_g = d·sc_j}, {@code o_g = dmin·m_j} for the 32-value sub-block
 * {@code j} holding {@code g}; Q2_K {@code s_g = d·sc_g}, {@code o_g = dmin·m_g}. Per block: Q5_0
 * {@code s_g = d_b}, {@code o_g = 16·d_b}; IQ4_NL {@code s_g = d_b}, {@code o_g = 128·d_b}; Q5_1
 * {@code s_g = d_b}, {@code o_g = −m_b} for the 32-value block {@code b}; MXFP4 {@code s_g = 2^(e_b−128)},
 * {@code o_g = 128·s_g}. (f16 times a small integer: exact in f32, as ggml computes them.)
 *
 * <p><b>Layout:</b> a row starts with its scales, then {@code cols / 32} spans of 32 bytes.
 * Symmetric: the {@code cols / 256} super-block {@code d} as f32, then an int8 scale per group
 * (Q3_K's {@code sc − 32}, IQ4_XS's {@code ls − 32} written for both groups of its sub-block). With mins: the {@code d} as f32, the {@code dmin} as f32, then a byte
 * of scale and one of min per group (Q5_K's sub-block values written twice). Per block: the f16
 * {@code d} (and Q5_1's f16 {@code m}) as in the file (Q5_0, Q5_1, IQ4_NL); MXFP4's exponent byte. Span {@code i} covers columns
 * {@code 32i .. 32i+31}; read as eight little-endian ints, byte {@code k} of int {@code j} is the
 * quant of column {@code 32i + 8k + j}. Bytes 0–1 belong to group {@code 2i}, 2–3 to {@code 2i+1}.
 * That is 8.5 to 9.25 bits per value against the files' 6.56 (Q6_K), 6 (Q5_1), 5.5 (Q5_K, Q5_0),
 * 4.5 (IQ4_NL), 4.25 (IQ4_XS, MXFP4; MXFP4 takes 8.25 here), 3.44 (Q3_K) and 2.63 (Q2_K): more bytes streamed, in a fraction of
 * the operations (the IQ4 grid is not linear, so its indices cannot be used as numbers the way
 * {@link Q4Spans} uses Q4_0's).
 *
 * <p><b>Why (almost) no shifts:</b> as in {@link Q4Spans}: for bytes {@code k} = 0–2,
 * {@code v & (0xFF << 8k)} converts to exactly {@code q·256^k}, and the activation chunk is scaled by
 * {@code 256^-k} once per input row (exact for any activation above 2^-110); byte 3 is read as
 * {@code v >>> 24}, one shift in place of the AND, so it may use all eight bits (the IQ4 grid's
 * values + 128 reach 241; masked in place such a byte would turn the int negative). The products
 * {@code q·x} are the same exact numbers either way.
 *
 * <p><b>Order per output element</b> (every kernel here, any batch size or worker split): for each
 * span, its two groups {@code a} and {@code b} each give {@code t = fma(q1, x1, q0·x0)} over
 * their two 8-column chunks (float quants), then {@code acc = acc + fma(t_a, s_a, t_b·s_b)}.
 * One add per span on the accumulator, not an FMA per group: with groups of 16 values the
 * accumulator's dependency chain (four FMAs of 4 cycles per 64 values) bounded the batch-1 loop;
 * with one 3-cycle add per 32 values it runs 21% faster on L2-resident weights and 5–12% from
 * memory, the 4-row kernel unchanged (one JVM, alternating). The offsets are one more dot product
 * over the row's groups: {@code cor = fma(o[8c..], n[8c..], cor)} for each group of 8, with
 * {@code n_g = −Σ x} over group {@code g} (its two chunks added lane-wise, then
 * {@link SimdKernels#sum8}). Result: {@code sum8(acc) + sum8(cor)}.
 */
abstract sealed class ByteSpans extends SpanKernels {
    private static final int Q6_BLOCK = 210, Q5_BLOCK = 176, Q3_BLOCK = 110, Q2_BLOCK = 84, IQ4_XS_BLOCK = 136, IQ4_NL_BLOCK = 18, MXFP4_BLOCK = 17;
    /** Activation scale per byte position: 256^-k for bytes 0–2, isolated in place; byte 3 is shifted down. */
    private static final float[] BYTE_SCALE = {1f, 0x1p-8f, 0x1p-16f, 1f};

    /**
     * The three layouts: symmetric ({@code o = k·s}: Q6_K with k = 32, Q3_K with k = 4, IQ4_XS with
     * k = 128), with mins (Q5_K, Q2_K) and per-block f16 (Q5_0, Q5_1, IQ4_NL). Each supplies its {@code rowScales}; kernels and
     * finish are shared.
     */
    static final ByteSpans Q6_K = new Sym(32f), Q3_K = new Sym(4f), IQ4_XS = new Sym(128f), TQ = new Sym(1f), Q5_K = new Min(), Q2_K = new Min(),
            Q5_0 = new Block(false, 16f), Q5_1 = new Block(true, 0f), IQ4_NL = new Block(false, 128f), MXFP4 = new Mx();

    /**
     * Whether this matrix can be repacked: Q6_K, Q5_K, Q3_K, Q2_K, Q5_0, Q5_1, IQ4_XS or IQ4_NL in
     * file layout, a multiple of 256 wide, and (Q5_0, Q5_1, IQ4_NL) every f16 scale and min finite: {@link Block} converts
     * them with bit operations that are exact for finite f16 only.
     */
    static boolean fits(WeightMatrix w) {
        if (w.layout() != WeightLayout.GGML || layoutFor(w.type()) == null || w.cols() % 256 != 0) return false;
        return switch (w.type()) {
            case Q5_0 -> finiteF16(w, 22, 0);
            case Q5_1 -> finiteF16(w, 24, 0, 2);
            case IQ4_NL -> finiteF16(w, IQ4_NL_BLOCK, 0);
            case MXFP4 -> normalScales(w);
            default -> true;
        };
    }

    /** The byte-span layout for a type, or null. */
    private static WeightLayout layoutFor(GgmlType type) {
        return switch (type) {
            case Q6_K -> WeightLayout.Q6_K_SPANS;
            case Q5_K -> WeightLayout.Q5_K_SPANS;
            case Q3_K -> WeightLayout.Q3_K_SPANS;
            case Q2_K -> WeightLayout.Q2_K_SPANS;
            case Q5_0 -> WeightLayout.Q5_0_SPANS;
            case Q5_1 -> WeightLayout.Q5_1_SPANS;
            case IQ4_XS -> WeightLayout.IQ4_XS_SPANS;
            case IQ4_NL -> WeightLayout.IQ4_NL_SPANS;
            case MXFP4 -> WeightLayout.MXFP4_SPANS;
            case TQ1_0 -> WeightLayout.TQ1_0_SPANS;
            case TQ2_0 -> WeightLayout.TQ2_0_SPANS;
            case IQ1_S -> WeightLayout.IQ1_S_SPANS;
            case IQ1_M -> WeightLayout.IQ1_M_SPANS;
            case IQ2_XXS -> WeightLayout.IQ2_XXS_SPANS;
            case IQ2_XS -> WeightLayout.IQ2_XS_SPANS;
            case IQ2_S -> WeightLayout.IQ2_S_SPANS;
            case IQ3_XXS -> WeightLayout.IQ3_XXS_SPANS;
            case IQ3_S -> WeightLayout.IQ3_S_SPANS;
            default -> null;
        };
    }

    /** Whether a matrix in {@code layout} runs on these kernels. */
    static boolean handles(WeightLayout layout) {
        return switch (layout) {
            case Q6_K_SPANS, Q5_K_SPANS, Q3_K_SPANS, Q2_K_SPANS, Q5_0_SPANS, Q5_1_SPANS, IQ4_XS_SPANS, IQ4_NL_SPANS, MXFP4_SPANS, TQ1_0_SPANS, TQ2_0_SPANS,
                 IQ1_S_SPANS, IQ1_M_SPANS, IQ2_XXS_SPANS, IQ2_XS_SPANS, IQ2_S_SPANS, IQ3_XXS_SPANS, IQ3_S_SPANS -> true;
            default -> false;
        };
    }

    private static ByteSpans format(GgmlType type) {
        return switch (type) {
            case Q6_K -> Q6_K;
            case Q5_K -> Q5_K;
            case Q3_K -> Q3_K;
            case Q2_K -> Q2_K;
            case Q5_0 -> Q5_0;
            case Q5_1 -> Q5_1;
            case IQ4_XS, IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S -> IQ4_XS; // the same symmetric form, o = 128·s
            case IQ4_NL -> IQ4_NL;
            case MXFP4 -> MXFP4;
            case TQ1_0, TQ2_0 -> TQ;
            default -> throw new IllegalArgumentException(type + " has no byte-span layout");
        };
    }

    /**
     * Bytes of one repacked row, a byte per value plus: Q6_K and Q3_K an f32 d per 256 values and
     * an int8 scale per 16; Q5_K and Q2_K an f32 d and dmin per 256 and a byte of scale and of min
     * per 16 (IQ4_XS too); Q5_0 and IQ4_NL an f16 d per 32, Q5_1 an f16 d and m per 32.
     */
    static long rowBytes(GgmlType type, int cols) {
        return cols + switch (type) {
            case Q5_0, IQ4_NL -> cols / 16;
            case Q5_1 -> cols / 8;
            case MXFP4 -> cols / 32;
            default -> format(type) instanceof Min ? cols / 32 + cols / 8 : cols / 64 + cols / 16;
        };
    }

    /** {@link #finish}: offsets per 16-value group after the scales, {@code sum8(acc) + sum8(cor)}. */
    private ByteSpans() {
        super(16, true, 1f, 1f);
    }

    /** Copies a matrix of one of the byte-span types in file layout into byte-span layout in {@code arena}; rows in parallel. */
    static WeightMatrix repack(WeightMatrix w, Arena arena) {
        if (!fits(w)) {
            throw new IllegalArgumentException("tensor '" + w.name() + "' (" + w.type() + ", " + w.layout()
                    + ") cannot be repacked to byte spans");
        }
        GgmlType type = w.type();
        long outBytes = rowBytes(type, w.cols());
        MemorySegment dst = repackRows(w, outBytes, arena, () -> {
            int[] q = new int[w.cols()];
            return switch (type) {
                case Q6_K -> (in, out) -> { unpackQ6_K(in, q); packQ6_K(in, q, out); };
                case Q5_K -> (in, out) -> packQ5_K(in, q, out);
                case Q3_K -> (in, out) -> packQ3_K(in, q, out);
                case Q2_K -> (in, out) -> packQ2_K(in, q, out);
                case IQ4_XS -> (in, out) -> packIQ4_XS(in, q, out);
                case IQ4_NL -> (in, out) -> packIQ4_NL(in, q, out);
                case MXFP4 -> (in, out) -> packMXFP4(in, q, out);
                case TQ1_0, TQ2_0 -> {
                    float[] vals = new float[w.cols()];
                    yield (in, out) -> packTQ(type, in, q, vals, out);
                }
                case IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S -> {
                    dgr.gguf.codec.IntegerBlock form = dgr.gguf.codec.Codecs.integerBlock(type);
                    int[] scale = new int[16], v = new int[256];
                    yield (in, out) -> packIQ(type, form, in, q, scale, v, out);
                }
                default -> (in, out) -> packQ5_01(in, q, out, type == GgmlType.Q5_1);
            };
        });
        return new WeightMatrix(w.name(), type, w.rows(), w.cols(), outBytes, dst, layoutFor(type));
    }

    /**
     * Q6_K file row, per 210-byte super-block: ql[128], qh[64], int8 scales[16], f16 d. In half
     * {@code n}, position {@code p} (0..127) takes its low nibble from {@code ql[64n + (p & 31) +
     * 32·((p >> 5) & 1)]} (high nibble when {@code p >= 64}) and its top two bits from
     * {@code qh[32n + (p & 31)]} at bit {@code 2·(p >> 5)}; its sub-block is {@code 8n + p / 16}.
     */
    static void unpackQ6_K(byte[] in, int[] q) {
        for (int blk = 0; blk < q.length / 256; blk++) {
            int o = blk * Q6_BLOCK;
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

    /** Q6_K: super-block d as f32, the int8 group scales as they were, then spans (class comment). */
    static void packQ6_K(byte[] in, int[] q, byte[] out) {
        int nsb = q.length / 256, p = 0;
        for (int blk = 0; blk < nsb; blk++) p = putInt(out, p, Float.floatToRawIntBits(RowDecoder.f16le(in, blk * Q6_BLOCK + 208)));
        for (int blk = 0; blk < nsb; blk++) {
            for (int s = 0; s < 16; s++) out[p++] = in[blk * Q6_BLOCK + 192 + s];
        }
        packSpans(q, out, p);
    }

    /**
     * Q5_K file row to byte spans. Per 176-byte super-block the file has f16 d, f16 dmin, 12 bytes
     * of 6-bit scales and mins (ggml's get_scale_min_k4 packing), 32 bytes {@code qh} and 128 bytes
     * {@code qs}: sub-blocks {@code 2p} and {@code 2p+1} take their low four bits from the low and
     * high nibbles of {@code qs[32p + l]} and their fifth bit from bits {@code 2p} and {@code 2p+1}
     * of {@code qh[l]}. Written: all d as f32, all dmin as f32, each sub-block's scale twice (once per
     * 16-value group), each min twice, then the spans.
     */
    static void packQ5_K(byte[] in, int[] q, byte[] out) {
        int nsb = q.length / 256, ng = q.length / 16;
        MemorySegment packed = MemorySegment.ofArray(in);
        for (int blk = 0; blk < nsb; blk++) {
            int o = blk * Q5_BLOCK;
            putInt(out, 4 * blk, Float.floatToRawIntBits(RowDecoder.f16le(in, o)));
            putInt(out, 4 * (nsb + blk), Float.floatToRawIntBits(RowDecoder.f16le(in, o + 2)));
            for (int j = 0; j < 8; j++) {
                int sc = RowDecoder.scaleMinK4(packed, o + 4, j, 0), m = RowDecoder.scaleMinK4(packed, o + 4, j, 1);
                int g = 8 * nsb + 16 * blk + 2 * j;
                out[g] = out[g + 1] = (byte) sc;
                out[g + ng] = out[g + ng + 1] = (byte) m;
                int pair = j / 2, nib = 4 * (j % 2);
                for (int l = 0; l < 32; l++) {
                    int lo = ((in[o + 48 + 32 * pair + l] & 0xFF) >>> nib) & 15, hi = ((in[o + 16 + l] & 0xFF) >>> j) & 1;
                    q[256 * blk + 32 * j + l] = lo | (hi << 4);
                }
            }
        }
        packSpans(q, out, 8 * nsb + 2 * ng);
    }

    /**
     * Q3_K file row to byte spans. Per 110-byte super-block the file has 32 bytes {@code hmask},
     * 64 bytes {@code qs}, 12 bytes of 6-bit scales and an f16 d; group {@code 8n + 2j + h}
     * ({@code n} the 128-value half, {@code j} the 2-bit shift step, {@code h} which 16 bytes)
     * takes its two low bits from {@code qs[32n + 16h + l] >> 2j} and its third from bit
     * {@code 4n + j} of {@code hmask[16h + l]}: {@code q = low + 4·bit}, value {@code d·(sc − 32)·(q − 4)}.
     * Written: all d as f32, each group's {@code sc − 32} as int8, then the spans.
     */
    static void packQ3_K(byte[] in, int[] q, byte[] out) {
        int nsb = q.length / 256;
        MemorySegment packed = MemorySegment.ofArray(in);
        for (int blk = 0; blk < nsb; blk++) {
            int o = blk * Q3_BLOCK;
            putInt(out, 4 * blk, Float.floatToRawIntBits(RowDecoder.f16le(in, o + 108)));
            for (int grp = 0; grp < 16; grp++) {
                int n = grp / 8, j = (grp % 8) / 2, h = grp % 2;
                out[4 * nsb + 16 * blk + grp] = (byte) (RowDecoder.q3Scale(packed, o + 96, grp) - 32);
                for (int l = 0; l < 16; l++) {
                    int low = ((in[o + 32 + 32 * n + 16 * h + l] & 0xFF) >>> (2 * j)) & 3;
                    int bit = ((in[o + 16 * h + l] & 0xFF) >>> (4 * n + j)) & 1;
                    q[256 * blk + 16 * grp + l] = low | (bit << 2);
                }
            }
        }
        packSpans(q, out, 4 * nsb + q.length / 16);
    }

    /**
     * Q2_K file row to byte spans. Per 84-byte super-block the file has 16 scale bytes (low
     * nibble scale, high nibble min, one per group), 64 bytes {@code qs} and f16 d and dmin; group
     * {@code 8n + 2j + h} takes its two bits from {@code qs[32n + 16h + l] >> 2j}. Written: all d as
     * f32, all dmin as f32, a byte of scale and one of min per group, then the spans.
     */
    static void packQ2_K(byte[] in, int[] q, byte[] out) {
        int nsb = q.length / 256, ng = q.length / 16;
        for (int blk = 0; blk < nsb; blk++) {
            int o = blk * Q2_BLOCK;
            putInt(out, 4 * blk, Float.floatToRawIntBits(RowDecoder.f16le(in, o + 80)));
            putInt(out, 4 * (nsb + blk), Float.floatToRawIntBits(RowDecoder.f16le(in, o + 82)));
            for (int grp = 0; grp < 16; grp++) {
                int n = grp / 8, j = (grp % 8) / 2, h = grp % 2;
                int sm = in[o + grp] & 0xFF, g = 8 * nsb + 16 * blk + grp;
                out[g] = (byte) (sm & 15);
                out[g + ng] = (byte) (sm >>> 4);
                for (int l = 0; l < 16; l++) q[256 * blk + 16 * grp + l] = ((in[o + 16 + 32 * n + 16 * h + l] & 0xFF) >>> (2 * j)) & 3;
            }
        }
        packSpans(q, out, 8 * nsb + 2 * ng);
    }

    /**
     * Q5_0 (22-byte blocks: f16 d, 4 bytes {@code qh}, 16 bytes {@code qs}) or Q5_1 (24 bytes: f16
     * d, f16 m, then the same) to byte spans: value {@code j} of a block takes its low four bits
     * from the low ({@code j < 16}) or high nibble of {@code qs[j % 16]} and its fifth from bit
     * {@code j} of {@code qh}. Written: all d, then (Q5_1) all m, as they were, then the spans.
     */
    static void packQ5_01(byte[] in, int[] q, byte[] out, boolean mins) {
        int nb = q.length / 32, block = mins ? 24 : 22, h = mins ? 4 : 2;
        for (int b = 0; b < nb; b++) {
            int o = b * block;
            out[2 * b] = in[o];
            out[2 * b + 1] = in[o + 1];
            if (mins) {
                out[2 * (nb + b)] = in[o + 2];
                out[2 * (nb + b) + 1] = in[o + 3];
            }
            int qh = (in[o + h] & 0xFF) | (in[o + h + 1] & 0xFF) << 8 | (in[o + h + 2] & 0xFF) << 16 | (in[o + h + 3] & 0xFF) << 24;
            for (int j = 0; j < 16; j++) {
                int v = in[o + h + 4 + j] & 0xFF;
                q[32 * b + j] = (v & 15) | ((qh >>> j) & 1) << 4;
                q[32 * b + j + 16] = (v >>> 4) | ((qh >>> (j + 16)) & 1) << 4;
            }
        }
        packSpans(q, out, (mins ? 4 : 2) * nb);
    }

    /**
     * IQ4_XS file row to byte spans. Per 136-byte super-block the file has f16 d, u16
     * {@code scales_h}, 4 bytes {@code scales_l} and 128 bytes {@code qs}: sub-block {@code j} has
     * the 6-bit scale {@code ls = (scales_l[j/2] >> 4·(j%2) & 15) | (scales_h >> 2j & 3) << 4} and
     * its value {@code l} the index in the low ({@code l < 16}) or high nibble of
     * {@code qs[16j + l % 16]}. Written: all d as f32, each sub-block's {@code ls − 32} as int8 for
     * both its groups, then the spans of grid value + 128.
     */
    static void packIQ4_XS(byte[] in, int[] q, byte[] out) {
        int nsb = q.length / 256;
        for (int blk = 0; blk < nsb; blk++) {
            int o = blk * IQ4_XS_BLOCK;
            putInt(out, 4 * blk, Float.floatToRawIntBits(RowDecoder.f16le(in, o)));
            int sh = (in[o + 2] & 0xFF) | (in[o + 3] & 0xFF) << 8;
            for (int j = 0; j < 8; j++) {
                int ls = ((in[o + 4 + j / 2] & 0xFF) >>> (4 * (j % 2)) & 15) | ((sh >>> (2 * j)) & 3) << 4;
                out[4 * nsb + 16 * blk + 2 * j] = out[4 * nsb + 16 * blk + 2 * j + 1] = (byte) (ls - 32);
                gridBytes(in, o + 8 + 16 * j, q, 256 * blk + 32 * j);
            }
        }
        packSpans(q, out, 4 * nsb + q.length / 16);
    }

    /** IQ4_NL (18-byte blocks: f16 d, 16 bytes {@code qs} as IQ4_XS's) to byte spans: all d as they were, then the spans. */
    static void packIQ4_NL(byte[] in, int[] q, byte[] out) {
        for (int b = 0; b < q.length / 32; b++) {
            int o = b * IQ4_NL_BLOCK;
            out[2 * b] = in[o];
            out[2 * b + 1] = in[o + 1];
            gridBytes(in, o + 2, q, 32 * b);
        }
        packSpans(q, out, q.length / 16);
    }

    /**
     * MXFP4 (17-byte blocks: the E8M0 exponent {@code e}, then 16 bytes of 4-bit indices, low
     * nibbles values 0–15, high nibbles 16–31) to byte spans: all {@code e} as they were, then each
     * value's doubled E2M1 point + 128 (116..140), so that value = (q − 128)·2^(e−128).
     */
    static void packMXFP4(byte[] in, int[] q, byte[] out) {
        for (int b = 0; b < q.length / 32; b++) {
            int o = b * MXFP4_BLOCK;
            out[b] = in[o];
            for (int l = 0; l < 16; l++) {
                int v = in[o + 1 + l] & 0xFF;
                q[32 * b + l] = MXFP4_POINTS[v & 15] + 128;
                q[32 * b + l + 16] = MXFP4_POINTS[v >>> 4] + 128;
            }
        }
        packSpans(q, out, q.length / 32);
    }

    /**
     * TQ1_0 or TQ2_0 file row to byte spans in the symmetric layout: each block's d as f32, an int8
     * scale of 1 per group, each trit (0..2) as a byte, so value = d·q − 1·d. The trits come from the
     * codec's own decode ({@code (trit − 1)·d}, so exactly −d, 0, d, or 2·d for TQ2_0's unused fourth
     * code), which keeps the packing order in one place; {@code vals} is the packer's scratch.
     */
    static void packTQ(GgmlType type, byte[] in, int[] q, float[] vals, byte[] out) {
        int nsb = q.length / 256, block = (int) type.bytesFor(256), dAt = block - 2;
        dgr.gguf.codec.Codecs.of(type).dequantize(MemorySegment.ofArray(in), 0, vals, 0, q.length);
        for (int b = 0; b < nsb; b++) {
            float d = RowDecoder.f16le(in, b * block + dAt);
            putInt(out, 4 * b, Float.floatToRawIntBits(d));
            for (int g = 0; g < 16; g++) out[4 * nsb + 16 * b + g] = 1;
            for (int i = 256 * b; i < 256 * (b + 1); i++) q[i] = d == 0 ? 1 : Math.round(vals[i] / d) + 1;
        }
        packSpans(q, out, 4 * nsb + q.length / 16);
    }

    /**
     * An IQ1/IQ2/IQ3 file row to byte spans in the symmetric layout, from the codec's integer form
     * ({@code value = d·scale·q}, exactly the decoded value): each block's d as f32, its 16 scales
     * (1..31) as int8, each {@code q + 128} (66..190) as a byte, so value = s·byte − 128·s;
     * {@code scale} and {@code v} are the packer's scratch for one block.
     */
    static void packIQ(GgmlType type, dgr.gguf.codec.IntegerBlock form, byte[] in, int[] q, int[] scale, int[] v, byte[] out) {
        int nsb = q.length / 256, block = type.blockBytes;
        MemorySegment src = MemorySegment.ofArray(in);
        for (int b = 0; b < nsb; b++) {
            putInt(out, 4 * b, Float.floatToRawIntBits(form.integers(src, (long) b * block, scale, v)));
            for (int g = 0; g < 16; g++) out[4 * nsb + 16 * b + g] = (byte) scale[g];
            for (int i = 0; i < 256; i++) q[256 * b + i] = v[i] + 128;
        }
        packSpans(q, out, 4 * nsb + q.length / 16);
    }

    /** E2M1's points doubled (ggml's kvalues_mxfp4), index 8–15 the negatives. */
    private static final int[] MXFP4_POINTS = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

    /**
     * Whether every block exponent of a file-layout MXFP4 matrix is at least 2, so its half scale
     * {@code 2^(e−128)} is a normal float that {@link Mx} builds from the exponent's bits (0 and 1
     * give subnormal scales, which such a matrix keeps in file layout, decoded exactly per row).
     */
    static boolean normalScales(WeightMatrix w) {
        MemorySegment m = w.data();
        for (long o = 0, bytes = w.rowBytes() * w.rows(); o < bytes; o += MXFP4_BLOCK) {
            if ((m.get(java.lang.foreign.ValueLayout.JAVA_BYTE, o) & 0xFF) < 2) return false;
        }
        return true;
    }

    /** The 32 values of 16 index bytes at {@code in[o]} as grid value + 128 (1..241) into {@code q[at ..]}. */
    private static void gridBytes(byte[] in, int o, int[] q, int at) {
        for (int l = 0; l < 16; l++) {
            int v = in[o + l] & 0xFF;
            q[at + l] = Iq4Fit.value(v & 15) + 128;
            q[at + l + 16] = Iq4Fit.value(v >>> 4) + 128;
        }
    }

    /** Quants (column order) into spans from {@code out[p]}: byte k of int j of span i is column 32i + 8k + j. */
    private static void packSpans(int[] q, byte[] out, int p) {
        for (int i = 0; i < q.length / 32; i++) {
            for (int j = 0; j < 8; j++) {
                for (int k = 0; k < 4; k++) out[p++] = (byte) q[32 * i + 8 * k + j];
            }
        }
    }

    static void matmul(WeightMatrix w, float[] x, int nRows, float[] out, int oStart, int oEnd, Scratch s) {
        int cols = w.cols();
        // The spans are a row's last cols bytes, after its scales.
        format(w.type()).walk(w, w.rowBytes() - cols, cols / 32, prepare(x, nRows, cols, s), nRows, out, oStart, oEnd, s);
    }

    /**
     * Scaled activations and negated sub-block sums for every batch row, once per input and worker
     * ({@link SpanInput}).
     */
    private static SpanInput prepare(float[] x, int nRows, int cols, Scratch s) {
        return s.bytes.prepare(x, nRows, cols, s.epoch, BYTE_SCALE, 16, s.lanes);
    }

    /** Q6_K, Q3_K and IQ4_XS: {@code s = d·sc} with a signed int8 {@code sc}, {@code o = k·s} (k = 32, 4 and 128). */
    private static final class Sym extends ByteSpans {
        private final float k;

        Sym(float k) {
            this.k = k;
        }

        /**
         * The row's group scales {@code d·sc} into {@code acc[32 ..]} and the offsets {@code k·d·sc}
         * after them, eight per vector operation, so the span loops read each scale with one
         * broadcast load instead of two scalar loads, a conversion and a multiply (the same f32
         * products, so the same bits; times k, a power of two, is exact).
         */
        @Override
        void rowScales(MemorySegment m, long off, int cols, float[] acc) {
            long scl = off + cols / 64; // the int8 scales follow cols/64 bytes of d
            int ns = cols / 16;
            for (int g = 0; g < cols / 256; g++) {
                float d = m.get(F32, off + 4L * g);
                for (int h = 0; h < 2; h++) {
                    FloatVector s = ((FloatVector) ByteVector.fromMemorySegment(B64, m, scl + 16L * g + 8 * h, LE)
                            .convertShape(VectorOperators.B2I, I, 0).convert(VectorOperators.I2F, 0)).mul(d);
                    s.intoArray(acc, 32 + 16 * g + 8 * h);
                    s.mul(k).intoArray(acc, 32 + ns + 16 * g + 8 * h);
                }
            }
        }
    }

    /**
     * Q5_0, IQ4_NL and Q5_1: an f16 {@code d} per 32-value block (both its groups), {@code o = k·d}
     * (Q5_0's "− 16", IQ4_NL's "− 128") or {@code o = −m} (Q5_1's f16 min, added).
     */
    private static final class Block extends ByteSpans {
        static final VectorShuffle<Float> FIRST =
                VectorShuffle.fromValues(F, 0, 0, 1, 1, 2, 2, 3, 3);
        static final VectorShuffle<Float> SECOND =
                VectorShuffle.fromValues(F, 4, 4, 5, 5, 6, 6, 7, 7);
        private final boolean mins;
        private final float k;

        Block(boolean mins, float k) {
            this.mins = mins;
            this.k = k;
        }

        /**
         * Eight blocks per step: their f16 {@code d} (and {@code m}) to f32 by the exact bit
         * conversion {@link #f16x8}, each value then written for both 16-value groups of its block.
         */
        @Override
        void rowScales(MemorySegment m, long off, int cols, float[] acc) {
            int nb = cols / 32, ns = cols / 16;
            for (int j = 0; j < nb; j += 8) {
                FloatVector d = f16x8(m, off + 2L * j, 0x1p112f);
                FloatVector o = mins ? f16x8(m, off + 2L * (nb + j), -0x1p112f) : d.mul(k);
                d.rearrange(FIRST).intoArray(acc, 32 + 2 * j);
                d.rearrange(SECOND).intoArray(acc, 32 + 2 * j + 8);
                o.rearrange(FIRST).intoArray(acc, 32 + ns + 2 * j);
                o.rearrange(SECOND).intoArray(acc, 32 + ns + 2 * j + 8);
            }
        }
    }

    /**
     * MXFP4: per 32-value block {@code s = 2^(e−128)} (ggml's half E8M0 scale: the points are
     * stored doubled) from the exponent byte's bits, {@code (e − 1) << 23}, exact for
     * {@code e ≥ 2}; {@code o = 128·s}.
     */
    private static final class Mx extends ByteSpans {
        @Override
        void rowScales(MemorySegment m, long off, int cols, float[] acc) {
            int nb = cols / 32, ns = cols / 16;
            for (int j = 0; j < nb; j += 8) {
                FloatVector d = ((IntVector) ByteVector.fromMemorySegment(B64, m, off + j, LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, I, 0))
                        .sub(1).lanewise(VectorOperators.LSHL, 23).reinterpretAsFloats();
                FloatVector o = d.mul(128f);
                d.rearrange(Block.FIRST).intoArray(acc, 32 + 2 * j);
                d.rearrange(Block.SECOND).intoArray(acc, 32 + 2 * j + 8);
                o.rearrange(Block.FIRST).intoArray(acc, 32 + ns + 2 * j);
                o.rearrange(Block.SECOND).intoArray(acc, 32 + ns + 2 * j + 8);
            }
        }
    }

    /** Q5_K and Q2_K: {@code s = d·sc}, {@code o = dmin·m} with unsigned {@code sc} and {@code m} per group. */
    private static final class Min extends ByteSpans {
        /** The row's group scales {@code d·sc} into {@code acc[32 ..]} and mins {@code dmin·m} after them, eight per vector operation. */
        @Override
        void rowScales(MemorySegment m, long off, int cols, float[] acc) {
            int nsb = cols / 256, ns = cols / 16;
            long scl = off + 8L * nsb, mins = scl + ns;
            for (int g = 0; g < nsb; g++) {
                float d = m.get(F32, off + 4L * g), dmin = m.get(F32, off + 4L * (nsb + g));
                for (int h = 0; h < 2; h++) {
                    ((FloatVector) ByteVector.fromMemorySegment(B64, m, scl + 16L * g + 8 * h, LE)
                            .convertShape(VectorOperators.ZERO_EXTEND_B2I, I, 0).convert(VectorOperators.I2F, 0)).mul(d)
                            .intoArray(acc, 32 + 16 * g + 8 * h);
                    ((FloatVector) ByteVector.fromMemorySegment(B64, m, mins + 16L * g + 8 * h, LE)
                            .convertShape(VectorOperators.ZERO_EXTEND_B2I, I, 0).convert(VectorOperators.I2F, 0)).mul(dmin)
                            .intoArray(acc, 32 + ns + 16 * g + 8 * h);
                }
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
    final void row1(MemorySegment m, long off, long w, int spans, float[] xs, int b, int cols, float[] acc) {
        int x0 = SpanInput.PAD + b * cols;
        FloatVector a0 = FloatVector.zero(F);
        for (int i = 0; i < spans; i += 2) {
            IntVector v = IntVector.fromMemorySegment(I, m, w + 32L * i, LE);
            int xo = 32 * i;
            {
                FloatVector q0 = ((FloatVector) v.and(0xFF).convert(VectorOperators.I2F, 0)), q1 = ((FloatVector) v.and(0xFF00).convert(VectorOperators.I2F, 0));
                FloatVector q2 = ((FloatVector) v.and(0xFF0000).convert(VectorOperators.I2F, 0)), q3 = ((FloatVector) v.lanewise(VectorOperators.LSHR, 24).convert(VectorOperators.I2F, 0));
                FloatVector sa = FloatVector.broadcast(F, acc[32 + 2 * i]), sb = FloatVector.broadcast(F, acc[32 + 2 * i + 1]);
                FloatVector ta = q1.fma(FloatVector.fromArray(F, xs, x0 + xo + 8), q0.mul(FloatVector.fromArray(F, xs, x0 + xo)));
                FloatVector tb = q3.fma(FloatVector.fromArray(F, xs, x0 + xo + 24), q2.mul(FloatVector.fromArray(F, xs, x0 + xo + 16)));
                a0 = a0.add(ta.fma(sa, tb.mul(sb)));
            }
            v = IntVector.fromMemorySegment(I, m, w + 32L * i + 32, LE);
            xo = 32 * i + 32;
            {
                FloatVector q0 = ((FloatVector) v.and(0xFF).convert(VectorOperators.I2F, 0)), q1 = ((FloatVector) v.and(0xFF00).convert(VectorOperators.I2F, 0));
                FloatVector q2 = ((FloatVector) v.and(0xFF0000).convert(VectorOperators.I2F, 0)), q3 = ((FloatVector) v.lanewise(VectorOperators.LSHR, 24).convert(VectorOperators.I2F, 0));
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
    final void rows2(MemorySegment m, long off, long w, int spans, float[] xs, int b, int cols, float[] acc) {
        int x0 = SpanInput.PAD + b * cols; int x1 = x0 + cols;
        FloatVector a0 = FloatVector.zero(F), a1 = a0;
        for (int i = 0; i < spans; i++) {
            IntVector v = IntVector.fromMemorySegment(I, m, w + 32L * i, LE);
            int xo = 32 * i;
            FloatVector q0 = ((FloatVector) v.and(0xFF).convert(VectorOperators.I2F, 0)), q1 = ((FloatVector) v.and(0xFF00).convert(VectorOperators.I2F, 0));
            FloatVector q2 = ((FloatVector) v.and(0xFF0000).convert(VectorOperators.I2F, 0)), q3 = ((FloatVector) v.lanewise(VectorOperators.LSHR, 24).convert(VectorOperators.I2F, 0));
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
    final void rows4(MemorySegment m, long off, long w, int spans, float[] xs, int b, int cols, float[] acc) {
        int x0 = SpanInput.PAD + b * cols; int x1 = x0 + cols; int x2 = x1 + cols; int x3 = x2 + cols;
        FloatVector a0 = FloatVector.zero(F), a1 = a0, a2 = a0, a3 = a0;
        for (int i = 0; i < spans; i++) {
            IntVector v = IntVector.fromMemorySegment(I, m, w + 32L * i, LE);
            int xo = 32 * i;
            FloatVector q0 = ((FloatVector) v.and(0xFF).convert(VectorOperators.I2F, 0)), q1 = ((FloatVector) v.and(0xFF00).convert(VectorOperators.I2F, 0));
            FloatVector q2 = ((FloatVector) v.and(0xFF0000).convert(VectorOperators.I2F, 0)), q3 = ((FloatVector) v.lanewise(VectorOperators.LSHR, 24).convert(VectorOperators.I2F, 0));
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
