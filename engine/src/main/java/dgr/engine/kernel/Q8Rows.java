package dgr.engine.kernel;

import dgr.gguf.GgmlType;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.stream.IntStream;

/**
 * Q4_0 and Q8_0 weights against activations rounded to 8 bits ({@link Q8Input}): the integer
 * arithmetic of llama.cpp's Q4_0 × Q8_0 and Q8_0 × Q8_0 dot products, in an order dgr fixes.
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
 * f32 product. The output is {@code acc}. Nothing in it depends on the batch or the worker split,
 * and integer sums do not depend on grouping: native and Java agree to the bit ({@code Q8RowsTest}).
 */
final class Q8Rows {
    /** Rows interleaved per group. */
    static final int GROUP = 16;
    private static final ValueLayout.OfShort F16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(java.nio.ByteOrder.LITTLE_ENDIAN);

    private Q8Rows() {}

    /** Whether {@code w} can be repacked: Q4_0 or Q8_0 in file layout, width a multiple of 256, every f16 scale finite. */
    static boolean fits(WeightMatrix w) {
        if (w.layout() != WeightLayout.GGML || w.cols() % 256 != 0) return false;
        return switch (w.type()) {
            case Q4_0 -> Q4Spans.finiteScales(w);
            case Q8_0 -> SpanKernels.finiteF16(w, 34, 0);
            default -> false;
        };
    }

    /** Copies a Q4_0 or Q8_0 matrix in file layout into its interleaved layout in {@code arena}; groups in parallel. */
    static WeightMatrix repack(WeightMatrix w, Arena arena) {
        if (!fits(w)) {
            throw new IllegalArgumentException("tensor '" + w.name() + "' (" + w.type() + ", " + w.cols()
                    + " columns, " + w.layout() + ") cannot be repacked for 8-bit activations");
        }
        boolean q8 = w.type() == GgmlType.Q8_0;
        long rowBytes = w.rowBytes(), groupBytes = GROUP * rowBytes;
        int groups = (w.rows() + GROUP - 1) / GROUP, nb = w.cols() / 32;
        MemorySegment dst = NativeMemory.allocateWeights(groups * groupBytes, arena), src = w.data();
        IntStream.range(0, groups).parallel().forEach(g -> {
            byte[] in = new byte[(int) groupBytes], out = new byte[(int) groupBytes];
            int have = Math.min(GROUP, w.rows() - GROUP * g);
            MemorySegment.copy(src, ValueLayout.JAVA_BYTE, g * groupBytes, in, 0, (int) (have * rowBytes));
            if (q8) packQ8_0(in, nb, out);
            else packQ4_0(in, nb, out);
            MemorySegment.copy(out, 0, dst, ValueLayout.JAVA_BYTE, g * groupBytes, out.length);
        });
        return new WeightMatrix(w.name(), w.type(), w.rows(), w.cols(), rowBytes, dst, q8 ? WeightLayout.Q8_0_Q8 : WeightLayout.Q4_0_Q8);
    }

    /** Sixteen Q4_0 file rows (per block an f16 d and 16 bytes, value i low nibble, i+16 high; missing rows zero) into one group. */
    static void packQ4_0(byte[] in, int nb, byte[] out) {
        java.util.Arrays.fill(out, (byte) 0);
        for (int b = 0; b < nb; b++) {
            int at = 288 * b;
            for (int r = 0; r < GROUP; r++) {
                int src = 18 * (r * nb + b);
                out[at + 2 * r] = in[src];
                out[at + 2 * r + 1] = in[src + 1];
                for (int i = 0; i < 32; i++) {
                    int v = in[src + 2 + (i & 15)] & 0xFF, quant = i < 16 ? v & 15 : v >>> 4;
                    out[at + 32 + 64 * (i / 8) + 4 * r + (i & 3)] |= (byte) (quant << ((i & 4) == 0 ? 0 : 4));
                }
            }
        }
    }

    /** Sixteen Q8_0 file rows (per block an f16 d and 32 int8) into one group. */
    static void packQ8_0(byte[] in, int nb, byte[] out) {
        for (int b = 0; b < nb; b++) {
            int at = 544 * b;
            for (int r = 0; r < GROUP; r++) {
                int src = 34 * (r * nb + b);
                out[at + 2 * r] = in[src];
                out[at + 2 * r + 1] = in[src + 1];
                for (int i = 0; i < 32; i++) out[at + 32 + 64 * (i / 4) + 4 * r + (i & 3)] = in[src + 2 + i];
            }
        }
    }

    /** Bytes per group and block: the scales, then the quants. */
    private static int blockBytes(WeightMatrix w) {
        return w.layout() == WeightLayout.Q8_0_Q8 ? 544 : 288;
    }

    /** Byte offset of block {@code b} of the group holding row {@code o}. */
    private static long blockAt(WeightMatrix w, int o, int b) {
        return (o / GROUP) * GROUP * w.rowBytes() + (long) blockBytes(w) * b;
    }

    /** Signed weight {@code i} of block {@code b} of row {@code o} (Q4_0: {@code q − 8}). */
    static int weight(WeightMatrix w, int o, int b, int i) {
        long at = blockAt(w, o, b) + 32;
        if (w.layout() == WeightLayout.Q8_0_Q8) return w.data().get(ValueLayout.JAVA_BYTE, at + 64 * (i / 4) + 4 * (o % GROUP) + (i & 3));
        int v = w.data().get(ValueLayout.JAVA_BYTE, at + 64 * (i / 8) + 4 * (o % GROUP) + (i & 3)) & 0xFF;
        return ((i & 4) == 0 ? v & 15 : v >>> 4) - 8;
    }

    /** The f16 scale of block {@code b} of row {@code o}, as f32. */
    static float scale(WeightMatrix w, int o, int b) {
        return Float.float16ToFloat(w.data().get(F16, blockAt(w, o, b) + 2 * (o % GROUP)));
    }

    static void matmul(WeightMatrix w, float[] x, int nRows, float[] out, int oStart, int oEnd, Scratch s) {
        Q8Input in = s.eightBit.prepare(x, nRows, w.cols(), s.epoch);
        if (Q8Native.KERNEL != null && w.data().isNative()) Q8Native.KERNEL.rows(w, in, nRows, out, oStart, oEnd, s);
        else javaRows(w, in, nRows, out, oStart, oEnd);
    }

    /**
     * The kernel in plain Java, the order above written out: for machines without a native
     * kernel, and the reference the native kernels are tested against.
     */
    static void javaRows(WeightMatrix w, Q8Input in, int nRows, float[] out, int oStart, int oEnd) {
        int nb = w.cols() / 32;
        for (int o = oStart; o < oEnd; o++) {
            for (int b = 0; b < nRows; b++) {
                float acc = 0f;
                for (int blk = 0; blk < nb; blk++) {
                    int ab = b * nb + blk, isum = 0;
                    for (int i = 0; i < 32; i++) isum += weight(w, o, blk, i) * in.q[32 * ab + i];
                    acc = Math.fma((float) isum, scale(w, o, blk) * in.d[ab], acc);
                }
                out[b * w.rows() + o] = acc;
            }
        }
    }
}
