package dgr.engine.kernel;

import dgr.gguf.GgmlType;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.stream.IntStream;

/**
 * Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, IQ4_NL, MXFP4 and the K-quants (Q2_K to Q6_K, IQ4_XS) against activations rounded to 8 bits per 32 values
 * (Q6_K: per 256, {@link #span}; {@link Q8Input}): integer dot products as llama.cpp's (which rounds every K-quant's
 * activations per 256 values), in an order dgr fixes. The K-quants: see {@link KQuants}.
 * Engine {@code java-q8/1} runs every such matrix whose width is a multiple of 256 here;
 * {@link Q8Native} does it with AVX-512 VNNI or AVX2 where the CPU has them, {@link #javaRows}
 * everywhere else, with the same bits.
 *
 * <p><b>Layouts</b> ({@link WeightLayout#Q4_0_Q8}, {@link WeightLayout#Q8_0_Q8}; as many bytes per
 * 32 values as the file): rows in groups of {@link #GROUP} (the last padded with zero rows); per
 * group, per 32-value block: the 16 rows' f16 scales (32 bytes), then the quants arranged so that
 * 32-bit lane {@code r} of each 64-byte stretch holds four values of row {@code r}: Q4_0 in four
 * stretches, byte {@code 4r + j} of stretch {@code k} holding row {@code r}'s value {@code 8k + j}
 * in its low nibble and {@code 8k + 4 + j} in its high one (unsigned, 0..15); Q8_0 in eight,
 * byte {@code 4r + j} of stretch {@code c} holding value {@code 4c + j} (signed). One 8-bit dot
 * instruction against four activation bytes broadcast to every lane then adds four products to
 * each of 16 rows, so a group's sixteen outputs come out in sixteen lanes and need no horizontal
 * sum (the interleaving is llama.cpp's idea for its repacked Q4_0; these layouts are dgr's own).
 * The weights are one sequential stream per worker.
 *
 * <p><b>Order per output element:</b> {@code acc = fma((float) isum_B, d_w·d_a, acc)} over blocks
 * {@code B} in order from +0, where {@code isum_B = Σ w·a} over the block's 32 values ({@code w} the
 * signed weight, Q4_0's {@code q − 8}: an exact integer, exact in f32) and {@code d_w·d_a} is one
 * f32 product; Q4_1 and Q5_1 then add their min, {@code acc = fma(d_a·(float) Σa, m, acc)}. The output is
 * {@code acc}. Nothing in it depends on the batch or the worker split, and integer sums do not depend on
 * grouping: native and Java agree to the bit ({@code Q8RowsTest}).
 */
final class Q8Rows {
    /** Rows interleaved per group. */
    static final int GROUP = 16;
    private static final ValueLayout.OfShort F16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(java.nio.ByteOrder.LITTLE_ENDIAN);

    private Q8Rows() {}

    /**
     * Where the 4-bit layouts keep value {@code i} (0..31) of row {@code r}'s block: byte
     * {@code nibbleAt(r, i)} of the block's 256 bytes of quants, at bit {@link #nibbleShift}: chunk
     * {@code i / 4} of a 64-byte stretch holds lane {@code r}'s four values, the low nibbles of
     * stretch {@code k} chunk {@code 2k}, the high ones chunk {@code 2k + 1}.
     */
    static int nibbleAt(int r, int i) {
        return 64 * (i / 8) + 4 * r + (i & 3);
    }

    static int nibbleShift(int i) {
        return (i & 4) == 0 ? 0 : 4;
    }

    /** Value {@code i}'s nibble out of the byte {@link #nibbleAt} gives (as an unsigned int). */
    static int nibble(int b, int i) {
        return (b >>> nibbleShift(i)) & 15;
    }

    /**
     * Whether {@code w} can be repacked: Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, IQ4_NL, MXFP4, Q2_K to Q6_K or IQ4_XS in file
     * layout, width a multiple of 256, every f16 scale finite (MXFP4: every exponent at least 2).
     */
    static boolean fits(WeightMatrix w) {
        if (w.layout() != WeightLayout.GGML || w.cols() % 256 != 0) return false;
        return switch (w.type()) {
            case Q4_0 -> Q4Spans.finiteScales(w);
            case Q8_0 -> SpanKernels.finiteF16(w, 34, 0);
            case Q4_K -> SpanKernels.finiteF16(w, 144, 0, 2);
            case Q5_K -> SpanKernels.finiteF16(w, 176, 0, 2);
            case Q6_K -> SpanKernels.finiteF16(w, 210, 208);
            case IQ4_NL -> SpanKernels.finiteF16(w, 18, 0);
            case IQ4_XS -> SpanKernels.finiteF16(w, 136, 0);
            // Exponents below 2 are subnormal scales, which the kernels' bit-built scale does not give.
            case MXFP4 -> ByteSpans.normalScales(w);
            case Q2_K -> SpanKernels.finiteF16(w, 84, 80, 82);
            case Q4_1 -> Q4Spans.finiteScales(w);
            case Q5_0 -> SpanKernels.finiteF16(w, 22, 0);
            case Q5_1 -> SpanKernels.finiteF16(w, 24, 0, 2);
            case Q3_K -> SpanKernels.finiteF16(w, 110, 108);
            default -> false;
        };
    }

    /** The interleaved layout of a type. */
    private static WeightLayout layoutOf(GgmlType t) {
        return switch (t) {
            case Q4_0 -> WeightLayout.Q4_0_Q8;
            case Q8_0 -> WeightLayout.Q8_0_Q8;
            case Q4_K -> WeightLayout.Q4_K_Q8;
            case Q5_K -> WeightLayout.Q5_K_Q8;
            case Q6_K -> WeightLayout.Q6_K_Q8;
            case IQ4_NL -> WeightLayout.IQ4_NL_Q8;
            case IQ4_XS -> WeightLayout.IQ4_XS_Q8;
            case MXFP4 -> WeightLayout.MXFP4_Q8;
            case Q2_K -> WeightLayout.Q2_K_Q8;
            case Q3_K -> WeightLayout.Q3_K_Q8;
            case Q4_1 -> WeightLayout.Q4_1_Q8;
            case Q5_0 -> WeightLayout.Q5_0_Q8;
            case Q5_1 -> WeightLayout.Q5_1_Q8;
            default -> throw new IllegalArgumentException(t + " has no 8-bit layout");
        };
    }

    /**
     * Bytes per row in the interleaved layout: the file's, except Q4_K, Q5_K, IQ4_XS and Q3_K, which
     * keep a byte per scale (and min): 148, 180, 138 and 114 per 256 values, not 144, 176, 136 and 110.
     */
    private static long rowBytes(GgmlType t, int cols) {
        return switch (t) {
            case Q4_K -> 148L * (cols / 256);
            case Q5_K -> 180L * (cols / 256);
            case IQ4_XS -> 138L * (cols / 256);
            case Q3_K -> 114L * (cols / 256);
            default -> t.bytesFor(cols);
        };
    }

    /** Copies a matrix {@link #fits} accepts, in file layout, into its interleaved layout in {@code arena}; groups in parallel. */
    static WeightMatrix repack(WeightMatrix w, Arena arena) {
        if (!fits(w)) {
            throw new IllegalArgumentException("tensor '" + w.name() + "' (" + w.type() + ", " + w.cols()
                    + " columns, " + w.layout() + ") cannot be repacked for 8-bit activations");
        }
        GgmlType type = w.type();
        long inRow = w.rowBytes(), outRow = rowBytes(type, w.cols()), groupBytes = GROUP * outRow;
        int groups = (w.rows() + GROUP - 1) / GROUP, nb = w.cols() / 32;
        MemorySegment dst = NativeMemory.allocateWeights(groups * groupBytes, arena), src = w.data();
        IntStream.range(0, groups).parallel().forEach(g -> {
            byte[] in = new byte[(int) (GROUP * inRow)], out = new byte[(int) groupBytes];
            int have = Math.min(GROUP, w.rows() - GROUP * g);
            MemorySegment.copy(src, ValueLayout.JAVA_BYTE, g * GROUP * inRow, in, 0, (int) (have * inRow));
            switch (type) {
                case Q8_0 -> Q8RowPackers.packQ8_0(in, nb, out);
                case Q4_0, IQ4_NL -> Q8RowPackers.packQ4_0(in, nb, out);
                case IQ4_XS -> Q8RowPackers.packIQ4_XS(in, nb / 8, out);
                case MXFP4 -> Q8RowPackers.packMXFP4(in, nb, out);
                case Q4_K -> Q8RowPackers.packQ4_K(in, nb / 8, out);
                case Q5_K -> Q8RowPackers.packQ5_K(in, nb / 8, out);
                case Q2_K, Q3_K -> Q8RowPackers.packQ2Q3_K(type, in, nb / 8, out);
                case Q4_1, Q5_0, Q5_1 -> Q8RowPackers.packLegacy(type, in, nb, out);
                default -> Q8RowPackers.packQ6_K(in, nb / 8, out);
            }
            MemorySegment.copy(out, 0, dst, ValueLayout.JAVA_BYTE, g * groupBytes, out.length);
        });
        return new WeightMatrix(w.name(), type, w.rows(), w.cols(), outRow, dst, layoutOf(type));
    }

    /** MXFP4's E2M1 values doubled, as ggml stores them (indices 8–15 the negatives). */
    private static final int[] E2M1 = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

    /** Bytes of scales per group and 32-value block: 16 f16, with 16 f16 mins (Q4_1, Q5_1), or MXFP4's 16 exponent bytes. */
    private static int headBytes(WeightMatrix w) {
        return switch (w.layout()) {
            case MXFP4_Q8 -> 16;
            case Q4_1_Q8, Q5_1_Q8 -> 64;
            default -> 32;
        };
    }

    /** Whether a block's values are {@code d·q + m} (Q4_1, Q5_1): its min is added apart. */
    private static boolean withMin(WeightMatrix w) {
        return w.layout() == WeightLayout.Q4_1_Q8 || w.layout() == WeightLayout.Q5_1_Q8;
    }

    /** Byte offset of block {@code b} of the group holding row {@code o} (the types with 32-value blocks). */
    private static long blockAt(WeightMatrix w, int o, int b) {
        int quants = switch (w.layout()) {
            case Q8_0_Q8 -> 512;
            case Q5_0_Q8, Q5_1_Q8 -> 320;
            default -> 256;
        };
        return (o / GROUP) * GROUP * w.rowBytes() + (long) (headBytes(w) + quants) * b;
    }

    /** The f16 min of block {@code b} of row {@code o} (Q4_1, Q5_1). */
    static float min(WeightMatrix w, int o, int b) {
        return Float.float16ToFloat(w.data().get(F16, blockAt(w, o, b) + 32 + 2 * (o % GROUP)));
    }

    /**
     * Weight {@code i} of block {@code b} of row {@code o} as the integer the dot product takes
     * (Q4_0: {@code q − 8}; Q5_0: {@code q − 16}; IQ4_NL, MXFP4: its grid value; Q4_1, Q5_1: {@code q},
     * their min added apart).
     */
    static int weight(WeightMatrix w, int o, int b, int i) {
        long at = blockAt(w, o, b) + headBytes(w);
        if (w.layout() == WeightLayout.Q8_0_Q8) return w.data().get(ValueLayout.JAVA_BYTE, at + 64 * (i / 4) + 4 * (o % GROUP) + (i & 3));
        int v = w.data().get(ValueLayout.JAVA_BYTE, at + nibbleAt(o % GROUP, i)) & 0xFF;
        int nibble = nibble(v, i);
        return switch (w.layout()) {
            case IQ4_NL_Q8 -> dgr.gguf.codec.Iq4Fit.value(nibble);
            case MXFP4_Q8 -> E2M1[nibble];
            case Q4_1_Q8 -> nibble;
            case Q5_0_Q8, Q5_1_Q8 -> {
                int fifth = ((w.data().get(ValueLayout.JAVA_BYTE, at + 256 + 4 * (o % GROUP) + (i & 3)) & 0xFF) >>> (i / 4)) & 1;
                yield (nibble | fifth << 4) - (w.layout() == WeightLayout.Q5_0_Q8 ? 16 : 0);
            }
            default -> nibble - 8;
        };
    }

    /**
     * The scale of block {@code b} of row {@code o}: its f16, or MXFP4's {@code 2^(e−128)} (ggml's
     * half scale), built as {@code (e−1) << 23}: exact for the {@code e ≥ 2} that {@link #fits} requires.
     */
    static float scale(WeightMatrix w, int o, int b) {
        if (w.layout() == WeightLayout.MXFP4_Q8) {
            int e = w.data().get(ValueLayout.JAVA_BYTE, blockAt(w, o, b) + o % GROUP) & 0xFF;
            return Float.intBitsToFloat((e - 1) << 23);
        }
        return Float.float16ToFloat(w.data().get(F16, blockAt(w, o, b) + 2 * (o % GROUP)));
    }

    /** Whether {@code layout} is one of these (the layouts that keep rows in groups of {@link #GROUP}). */
    static boolean handles(WeightLayout layout) {
        return layout.rowGroup() == GROUP;
    }

    /**
     * Values per activation scale that {@code layout}'s kernels take ({@link Q8Input}): Q6_K 256, whose kernels sum
     * a super-block in integers and scale it once ({@link KQuants}); the others 32.
     */
    static int span(WeightLayout layout) {
        return layout == WeightLayout.Q6_K_Q8 ? Q8Input.WIDE : Q8Input.NARROW;
    }

    static void matmul(WeightMatrix w, float[] x, int nRows, float[] out, int oStart, int oEnd, Scratch s) {
        Q8Input shared = s.shared, in;
        int span = span(w.layout());
        if (shared != null && shared.holds(x, nRows, w.cols(), span, s.epoch)) {
            in = shared;
        } else {
            long r0 = KernelAccount.start();
            in = (span == Q8Input.WIDE ? s.eightBitWide : s.eightBit).prepare(x, nRows, w.cols(), span, s.epoch);
            KernelAccount.rounding(r0);
        }
        long t0 = KernelAccount.start();
        if (Q8Native.KERNEL != null && w.data().isNative()) Q8Native.KERNEL.rows(w, in, nRows, out, oStart, oEnd, s);
        else javaRows(w, in, nRows, out, oStart, oEnd);
        KernelAccount.matrix(t0, w.layout(), (long) Math.max(0, oEnd - oStart) * w.cols() * nRows);
    }

    /**
     * The kernel in plain Java, the order above written out: for machines without a native
     * kernel, and the reference the native kernels are tested against.
     */
    static void javaRows(WeightMatrix w, Q8Input in, int nRows, float[] out, int oStart, int oEnd) {
        boolean superBlocks = KQuants.handles(w.layout());
        for (int o = oStart; o < oEnd; o++) {
            for (int b = 0; b < nRows; b++) {
                out[b * w.rows() + o] = superBlocks ? KQuants.dot(w, in, o, b) : dot(w, in, o, b);
            }
        }
    }

    /** Row {@code o} against batch row {@code b}, block after block (the types with 32-value blocks). */
    private static float dot(WeightMatrix w, Q8Input in, int o, int b) {
        int nb = w.cols() / 32;
        float acc = 0f;
        for (int blk = 0; blk < nb; blk++) {
            int ab = b * nb + blk, isum = 0;
            for (int i = 0; i < 32; i++) isum += weight(w, o, blk, i) * in.q[32 * ab + i];
            acc = Math.fma((float) isum, scale(w, o, blk) * in.d[ab], acc);
            if (withMin(w)) acc = Math.fma(in.d[ab] * (float) in.sum[ab], min(w, o, blk), acc);
        }
        return acc;
    }

    /**
     * The K-quants (Q2_K to Q6_K) and IQ4_XS in their interleaved layouts: accessors and the Java kernel. Order per
     * output element, super-block after super-block: Q2_K per 16-value sub-block
     * {@code fma((float) Σq·a, (d·sc)·d_a)} then {@code fma(−(d_a·(float) Σa), dmin·m)}; Q3_K per
     * 16-value sub-block {@code fma((float) Σ(q−4)·a, (d·(sc−32))·d_a)}; IQ4_XS per 32-value sub-block,
     * {@code acc = fma((float) Σ v·a, (d·(ls−32))·d_a, acc)} over grid values {@code v}; Q4_K and
     * Q5_K per 32-value sub-block {@code j}, with
     * {@code isum = Σ q·a} over unsigned quants, {@code acc = fma((float) isum, (d·sc_j)·d_a, acc)},
     * then {@code acc = fma(−(d_a·(float) Σa), dmin·m_j, acc)}; Q6_K, over activations with one scale {@code d_a}
     * per 256 values, per super-block {@code isum = Σ_k sc_k·Σ (q−32)·a} over its 16-value sub-blocks {@code k} (an exact
     * int32: at most 16·127·16·32·127 in magnitude), then {@code acc = fma((float) isum, d·d_a, acc)}: one float step per
     * super-block, so the AMX kernel takes a super-block's whole sum out of its tiles (the scales folded into the weights).
     * ({@code d·sc} and {@code dmin·m} are exact in f32. A min's term takes {@code d_a·Σa}, one product per batch
     * row and block that all 16 rows of a weight group share, where {@code (dmin·m)·d_a} was one per weight row: the
     * native kernels' min is one FMA per row and block.)
     */
    static final class KQuants {
        private KQuants() {}

        /** Whether {@code layout} is one of these (256-value super-blocks). */
        static boolean handles(WeightLayout layout) {
            return switch (layout) {
                case Q2_K_Q8, Q3_K_Q8, Q4_K_Q8, Q5_K_Q8, Q6_K_Q8, IQ4_XS_Q8 -> true;
                default -> false;
            };
        }

        private static long superAt(WeightMatrix w, int o, int sb) {
            long bytes = switch (w.layout()) {
                case Q4_K_Q8 -> 2368;
                case Q5_K_Q8 -> 2880;
                case IQ4_XS_Q8 -> 2208;
                case Q2_K_Q8 -> 1344;
                case Q3_K_Q8 -> 1824;
                default -> 3360;
            };
            return (o / GROUP) * GROUP * w.rowBytes() + bytes * sb;
        }

        /** Q4_K and Q5_K: scales and mins per 32 values, unsigned quants with a min to subtract. */
        private static boolean withMins(WeightMatrix w) {
            return w.layout() == WeightLayout.Q4_K_Q8 || w.layout() == WeightLayout.Q5_K_Q8;
        }

        static float d(WeightMatrix w, int o, int sb) {
            return Float.float16ToFloat(w.data().get(F16, superAt(w, o, sb) + 2 * (o % GROUP)));
        }

        /** Q4_K, Q5_K, Q2_K: the super-block's dmin. */
        static float dmin(WeightMatrix w, int o, int sb) {
            return Float.float16ToFloat(w.data().get(F16, superAt(w, o, sb) + 32 + 2 * (o % GROUP)));
        }

        /**
         * Q4_K, Q5_K: sub-block j's 6-bit scale; Q6_K: 16-value sub-block j's int8 scale; IQ4_XS:
         * sub-block j's {@code ls − 32}; Q2_K: 16-value sub-block j's 4-bit scale; Q3_K: its {@code sc − 32}.
         */
        static int scale(WeightMatrix w, int o, int sb, int j) {
            boolean unsigned = withMins(w) || w.layout() == WeightLayout.Q2_K_Q8;
            byte b = w.data().get(ValueLayout.JAVA_BYTE, superAt(w, o, sb) + (unsigned ? 64 : 32) + 16L * j + o % GROUP);
            return w.layout() == WeightLayout.Q2_K_Q8 ? b & 15 : unsigned ? b & 0xFF : b;
        }

        /** Q4_K, Q5_K: sub-block j's 6-bit min; Q2_K: 16-value sub-block j's 4-bit min. */
        static int min(WeightMatrix w, int o, int sb, int j) {
            if (w.layout() == WeightLayout.Q2_K_Q8) return (w.data().get(ValueLayout.JAVA_BYTE, superAt(w, o, sb) + 64 + 16L * j + o % GROUP) & 0xFF) >>> 4;
            return w.data().get(ValueLayout.JAVA_BYTE, superAt(w, o, sb) + 192 + 16L * j + o % GROUP) & 0xFF;
        }

        /** Quant {@code v} (0..255) of super-block {@code sb} of row {@code o}: Q4_K 0..15, Q5_K 0..31, Q6_K 0..63, IQ4_XS its grid value. */
        static int quant(WeightMatrix w, int o, int sb, int v) {
            int j = v / 32, i = v % 32, r = o % GROUP;
            if (w.layout() == WeightLayout.Q2_K_Q8 || w.layout() == WeightLayout.Q3_K_Q8) {
                boolean three = w.layout() == WeightLayout.Q3_K_Q8;
                int c = i / 4;
                long base = superAt(w, o, sb) + (three ? 288 + 192L * j : 320 + 128L * j) + 4 * r + (i & 3);
                int low = ((w.data().get(ValueLayout.JAVA_BYTE, base + 64 * (c / 4)) & 0xFF) >>> (2 * (c % 4))) & 3;
                return three ? low | (((w.data().get(ValueLayout.JAVA_BYTE, base + 128) & 0xFF) >>> c) & 1) << 2 : low;
            }
            if (w.layout() == WeightLayout.IQ4_XS_Q8) {
                int b = w.data().get(ValueLayout.JAVA_BYTE, superAt(w, o, sb) + 160 + 256L * j + nibbleAt(r, i)) & 0xFF;
                return dgr.gguf.codec.Iq4Fit.value(nibble(b, i));
            }
            if (withMins(w)) {
                boolean five = w.layout() == WeightLayout.Q5_K_Q8;
                long sub = superAt(w, o, sb) + 320 + (five ? 320L : 256L) * j;
                int b = w.data().get(ValueLayout.JAVA_BYTE, sub + nibbleAt(r, i)) & 0xFF;
                int nib = nibble(b, i);
                if (!five) return nib;
                return nib | (((w.data().get(ValueLayout.JAVA_BYTE, sub + 256 + 4 * r + (i & 3)) & 0xFF) >>> (i / 4)) & 1) << 4;
            }
            long blk = superAt(w, o, sb) + 288 + 384L * j;
            int lo = w.data().get(ValueLayout.JAVA_BYTE, blk + nibbleAt(r, i)) & 0xFF;
            int hi = w.data().get(ValueLayout.JAVA_BYTE, blk + 256 + 64 * (i / 16) + 4 * r + (i & 3)) & 0xFF;
            return nibble(lo, i) | (((hi >>> (2 * ((i / 4) % 4))) & 3) << 4);
        }

        /**
         * Row {@code o} against batch row {@code b}: Q6_K per super-block ({@link #dotQ6_K}); the others per
         * sub-block (16 values for Q2_K, Q3_K; 32 for the rest) the scale term, then (Q2_K, Q4_K, Q5_K) the min term.
         */
        static float dot(WeightMatrix w, Q8Input in, int o, int b) {
            WeightLayout l = w.layout();
            if (l == WeightLayout.Q6_K_Q8) return dotQ6_K(w, in, o, b);
            int nb = w.cols() / 32, sub = l == WeightLayout.Q2_K_Q8 || l == WeightLayout.Q3_K_Q8 ? 16 : 32;
            int offset = l == WeightLayout.Q3_K_Q8 ? 4 : 0;
            boolean mins = withMins(w) || l == WeightLayout.Q2_K_Q8;
            float acc = 0f;
            for (int sb = 0; sb < nb / 8; sb++) {
                float d = d(w, o, sb), dmin = mins ? dmin(w, o, sb) : 0f;
                for (int k = 0; k < 256 / sub; k++) {
                    int j = k * sub / 32, first = k * sub % 32, ab = b * nb + 8 * sb + j, isum = 0;
                    for (int i = first; i < first + sub; i++) isum += (quant(w, o, sb, 32 * j + i) - offset) * in.q[32 * ab + i];
                    float da = in.d[ab];
                    acc = Math.fma((float) isum, d * scale(w, o, sb, k) * da, acc);
                    if (mins) acc = Math.fma(-(da * (float) (sub == 16 ? in.half[2 * ab + first / 16] : in.sum[ab])), dmin * min(w, o, sb, k), acc);
                }
            }
            return acc;
        }

        /** Q6_K over activations rounded per 256 values: per super-block {@code Σ_k sc_k·Σ (q−32)·a} in integers, then one float step. */
        private static float dotQ6_K(WeightMatrix w, Q8Input in, int o, int b) {
            int nb = w.cols() / 32;
            float acc = 0f;
            for (int sb = 0; sb < nb / 8; sb++) {
                int ab = b * nb + 8 * sb, isum = 0;
                for (int k = 0; k < 16; k++) {
                    int part = 0;
                    for (int i = 16 * k; i < 16 * k + 16; i++) part += (quant(w, o, sb, i) - 32) * in.q[32 * ab + i];
                    isum += scale(w, o, sb, k) * part;
                }
                acc = Math.fma((float) isum, d(w, o, sb) * in.d[ab], acc);
            }
            return acc;
        }
    }
}
