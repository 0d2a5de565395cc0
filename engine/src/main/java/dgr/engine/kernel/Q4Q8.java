package dgr.engine.kernel;

import dgr.gguf.GgmlType;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.stream.IntStream;

/**
 * Q4_0 weights against activations rounded to 8 bits ({@link Q8Input}): the integer arithmetic of
 * llama.cpp's Q4_0 × Q8_0 dot product, in an order dgr fixes. Engine {@code java-q8/1} runs every
 * Q4_0 matrix whose width is a multiple of 256 here; {@link Q8Native} does it with AVX-512 VNNI
 * where the CPU has it, {@link #javaRows} everywhere else, with the same bits.
 *
 * <p><b>Layout</b> ({@link WeightLayout#Q4_0_Q8}, 18 bytes per 32 values as in the file): rows in
 * groups of {@link #GROUP} (the last padded with zero rows); per group, per 32-value block
 * {@code b}: the 16 rows' f16 scales (32 bytes), then four stretches of 64 bytes, where byte
 * {@code 4r + j} of stretch {@code k} holds row {@code r}'s value {@code 8k + j} in its low nibble
 * and {@code 8k + 4 + j} in its high one. A 64-byte load, a mask and a shift make two operands
 * whose 32-bit lane {@code r} holds four quants of row {@code r}: one VNNI instruction against four
 * activation bytes broadcast to every lane adds four products to each of 16 rows, so the sixteen
 * outputs of a group come out in sixteen lanes and need no horizontal sum (the interleaving is
 * llama.cpp's idea for its repacked Q4_0; the layout here is dgr's own). The weights are one
 * sequential stream per worker.
 *
 * <p><b>Order per output element:</b> {@code acc = fma((float) isum_B, d_w·d_a, acc)} over blocks
 * {@code B} in order from +0, where {@code isum_B = −8·Σa + Σ q·a} over the block's 32 values (that
 * is {@code Σ (q−8)·a}, an exact integer, exact in f32) and {@code d_w·d_a} is one f32 product. The
 * output is {@code acc}. Nothing in it depends on the batch or the worker split, and integer sums
 * do not depend on grouping: native and Java agree to the bit ({@code Q4Q8Test}).
 */
final class Q4Q8 {
    /** Rows interleaved per group. */
    static final int GROUP = 16;
    private static final ValueLayout.OfShort F16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(java.nio.ByteOrder.LITTLE_ENDIAN);

    private Q4Q8() {}

    /** Whether {@code w} can be repacked: Q4_0 in file layout, width a multiple of 256, every f16 scale finite. */
    static boolean fits(WeightMatrix w) {
        return w.layout() == WeightLayout.GGML && w.type() == GgmlType.Q4_0 && w.cols() % 256 == 0 && Q4Spans.finiteScales(w);
    }

    /** Copies a Q4_0 matrix in file layout into {@link WeightLayout#Q4_0_Q8} in {@code arena}; groups in parallel. */
    static WeightMatrix repack(WeightMatrix w, Arena arena) {
        if (!fits(w)) {
            throw new IllegalArgumentException("tensor '" + w.name() + "' (" + w.type() + ", " + w.cols()
                    + " columns, " + w.layout() + ") cannot be repacked for 8-bit activations");
        }
        long rowBytes = w.rowBytes(), groupBytes = GROUP * rowBytes;
        int groups = (w.rows() + GROUP - 1) / GROUP;
        MemorySegment dst = NativeMemory.allocateWeights(groups * groupBytes, arena), src = w.data();
        IntStream.range(0, groups).parallel().forEach(g -> {
            byte[] in = new byte[(int) groupBytes], out = new byte[(int) groupBytes];
            int have = Math.min(GROUP, w.rows() - GROUP * g);
            MemorySegment.copy(src, ValueLayout.JAVA_BYTE, g * groupBytes, in, 0, (int) (have * rowBytes));
            packGroup(in, w.cols() / 32, out);
            MemorySegment.copy(out, 0, dst, ValueLayout.JAVA_BYTE, g * groupBytes, out.length);
        });
        return new WeightMatrix(w.name(), w.type(), w.rows(), w.cols(), rowBytes, dst, WeightLayout.Q4_0_Q8);
    }

    /** Sixteen file-layout rows ({@code nb} blocks of an f16 d and 16 bytes, value i low nibble, i+16 high; missing rows zero) into one group. */
    static void packGroup(byte[] in, int nb, byte[] out) {
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

    /** Byte offset of block {@code b} of the group holding row {@code o} (the group's scales come first). */
    static long blockAt(WeightMatrix w, int o, int b) {
        return (o / GROUP) * GROUP * w.rowBytes() + 288L * b;
    }

    /** Quant {@code i} of block {@code b} of row {@code o} (layout above). */
    static int quant(WeightMatrix w, int o, int b, int i) {
        int v = w.data().get(ValueLayout.JAVA_BYTE, blockAt(w, o, b) + 32 + 64 * (i / 8) + 4 * (o % GROUP) + (i & 3)) & 0xFF;
        return (i & 4) == 0 ? v & 15 : v >>> 4;
    }

    /** The f16 scale of block {@code b} of row {@code o}, as f32. */
    static float scale(WeightMatrix w, int o, int b) {
        return Float.float16ToFloat(w.data().get(F16, blockAt(w, o, b) + 2 * (o % GROUP)));
    }

    static void matmul(WeightMatrix w, float[] x, int nRows, float[] out, int oStart, int oEnd, Scratch s) {
        Q8Input in = s.eightBit.prepare(x, nRows, w.cols(), s.epoch);
        if (Q8Native.AVAILABLE && w.data().isNative()) Q8Native.rows(w, in, nRows, out, oStart, oEnd, s);
        else javaRows(w, in, nRows, out, oStart, oEnd);
    }

    /**
     * The kernel in plain Java, the order above written out: for machines without the native
     * kernel, and the reference the native kernel is tested against.
     */
    static void javaRows(WeightMatrix w, Q8Input in, int nRows, float[] out, int oStart, int oEnd) {
        int nb = w.cols() / 32;
        for (int o = oStart; o < oEnd; o++) {
            for (int b = 0; b < nRows; b++) {
                float acc = 0f;
                for (int blk = 0; blk < nb; blk++) {
                    int ab = b * nb + blk, isum = in.off[ab];
                    for (int i = 0; i < 32; i++) isum += quant(w, o, blk, i) * in.q[32 * ab + i];
                    acc = Math.fma((float) isum, scale(w, o, blk) * in.d[ab], acc);
                }
                out[b * w.rows() + o] = acc;
            }
        }
    }
}
