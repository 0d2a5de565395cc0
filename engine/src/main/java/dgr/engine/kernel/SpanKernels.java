package dgr.engine.kernel;

import static dgr.engine.kernel.SimdKernels.F;
import static dgr.engine.kernel.SimdKernels.sum8;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.function.Supplier;
import java.util.stream.IntStream;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * The batch-group walk shared by the span layouts ({@link Q4Spans}, {@link ByteSpans}): batch rows
 * four, two and one at a time, each weight row decoded once per group, then the format's offsets
 * added by {@link #finish}.
 *
 * <p>Batch groups go outer and output rows inner: a group's activations stay in L1/L2 while the
 * chunk's weight rows (in L2 after the first group) are walked; output rows outer made every
 * weight row reread all batch rows' activations from L2.
 *
 * <p>The kernels are written out once per row count rather than built from a helper returning
 * vectors (no vector crosses a call: {@link Exp} says why), and an 8-row version measured
 * unstable (C2 sometimes left it on the Vector API's non-intrinsic fallback, 100× slower).
 */
abstract class SpanKernels {
    static final VectorSpecies<Integer> I = IntVector.SPECIES_256;
    static final VectorSpecies<Byte> B64 = ByteVector.SPECIES_64;
    static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;
    static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(LE);

    /**
     * How {@link #finish} reads a format's per-row work: the offsets' dot product runs over units
     * of {@code unitCols} columns (a block of 32 or a group of 16, whose negated activation sums
     * {@link SpanInput} holds); the offsets sit after the scales in {@code acc} or in their place
     * (Q4_0, whose offsets are its scales); the output is
     * {@code sum8(acc)·accScale + sum8(cor)·corScale}.
     */
    private final int unitCols;
    private final boolean offsetsAfterScales;
    private final float accScale, corScale;

    SpanKernels(int unitCols, boolean offsetsAfterScales, float accScale, float corScale) {
        this.unitCols = unitCols;
        this.offsetsAfterScales = offsetsAfterScales;
        this.accScale = accScale;
        this.corScale = corScale;
    }

    /** Turns one file-layout row ({@code in}) into one repacked row ({@code out}). */
    interface RowPacker {
        void pack(byte[] in, byte[] out);
    }

    /**
     * Copies {@code w} row by row into a new segment of {@code outBytes} per row in {@code arena}
     * (on 2 MiB pages where the system allows: {@link NativeMemory#allocateWeights}),
     * 256-row tasks in parallel; each task gets its own packer (with its own scratch) from
     * {@code packers}.
     */
    static MemorySegment repackRows(WeightMatrix w, long outBytes, Arena arena, Supplier<RowPacker> packers) {
        long inBytes = w.rowBytes();
        MemorySegment dst = NativeMemory.allocateWeights(outBytes * w.rows(), arena), src = w.data();
        int rowsPerTask = 256;
        IntStream.range(0, (w.rows() + rowsPerTask - 1) / rowsPerTask).parallel().forEach(task -> {
            byte[] in = new byte[(int) inBytes], out = new byte[(int) outBytes];
            RowPacker packer = packers.get();
            for (int r = task * rowsPerTask, e = Math.min(w.rows(), r + rowsPerTask); r < e; r++) {
                MemorySegment.copy(src, ValueLayout.JAVA_BYTE, r * inBytes, in, 0, in.length);
                packer.pack(in, out);
                MemorySegment.copy(out, 0, dst, ValueLayout.JAVA_BYTE, r * outBytes, out.length);
            }
        });
        return dst;
    }

    private static final VectorSpecies<Short> S128 = ShortVector.SPECIES_128;
    private static final ValueLayout.OfShort F16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(LE);

    /**
     * Eight little-endian f16 at {@code at} as f32, times {@code scale}: the f16 bits moved into
     * place in f32 bits (sign to bit 31, exponent and mantissa to bits 13–27) are exactly
     * {@code h·2^-112} for every finite f16, subnormals included, so {@code scale = ±2^112} gives
     * {@code ±h} exactly. Only matrices whose f16 values are all finite are repacked
     * ({@link #finiteF16}). Written to {@code dst[o ..]}, not returned: no vector crosses a call
     * ({@link Exp} says why).
     */
    static void f16x8(MemorySegment m, long at, float scale, float[] dst, int o) {
        IntVector h = (IntVector) ShortVector.fromMemorySegment(S128, m, at, LE).convertShape(VectorOperators.S2I, I, 0);
        h.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 3).and(0x8FFFFFFF).reinterpretAsFloats().mul(scale)
                .intoArray(dst, o);
    }

    /** Whether the f16 at {@code offsets} of every {@code block}-byte block of {@code w} (file layout) are finite. */
    static boolean finiteF16(WeightMatrix w, int block, int... offsets) {
        MemorySegment m = w.data();
        for (long o = 0, bytes = w.rowBytes() * w.rows(); o < bytes; o += block) {
            for (int at : offsets) {
                if ((m.get(F16, o + at) & 0x7C00) == 0x7C00) return false;
            }
        }
        return true;
    }

    /** Writes {@code v} little-endian at {@code out[p]}; returns {@code p + 4}. */
    static int putInt(byte[] out, int p, int v) {
        out[p] = (byte) v;
        out[p + 1] = (byte) (v >>> 8);
        out[p + 2] = (byte) (v >>> 16);
        out[p + 3] = (byte) (v >>> 24);
        return p + 4;
    }
    /** Span kernels for {@code n} batch rows starting at {@code b}; accumulators go to {@code acc[0 ..]}, 8 floats per row. */
    abstract void row1(MemorySegment m, long off, long quants, int spans, float[] xs, int b, int cols, float[] acc);

    abstract void rows2(MemorySegment m, long off, long quants, int spans, float[] xs, int b, int cols, float[] acc);

    abstract void rows4(MemorySegment m, long off, long quants, int spans, float[] xs, int b, int cols, float[] acc);

    /**
     * Per-row work the kernels and {@link #finish} read from {@code acc[32 ..]}, done before the
     * kernel call on the row at {@code off}: each format writes its scale per unit as f32 and, unless
     * they are the scales themselves (Q4_0), its offsets per unit after them (Q4_K's mins, Q4_1's
     * −m, the byte formats' {@code k·s}, mins or per-block values).
     */
    abstract void rowScales(MemorySegment m, long off, int cols, float[] acc);

    /**
     * {@code out} for batch rows {@code b .. b+n-1} of output row {@code o}: {@code cor}, the dot
     * product of the row's offsets with the negated unit sums ({@code cor = fma(c[8g..], n[8g..],
     * cor)} over groups of eight units), then {@code sum8(acc)·accScale + sum8(cor)·corScale}.
     */
    final void finish(int cols, float[] sums, float[] acc, int b, int n, float[] out, int rows, int o, float[] lanes) {
        int units = cols / unitCols, c0 = 32 + (offsetsAfterScales ? units : 0);
        for (int r = 0; r < n; r++) {
            FloatVector cor = FloatVector.zero(F);
            for (int g = 0, so = (b + r) * units; g < units; g += 8) {
                cor = FloatVector.fromArray(F, acc, c0 + g).fma(FloatVector.fromArray(F, sums, so + g), cor);
            }
            cor.intoArray(lanes, 0);
            out[(b + r) * rows + o] = sum8(acc, 8 * r) * accScale + sum8(lanes) * corScale;
        }
    }

    /**
     * {@link #finish} for the four batch rows {@code b .. b+3} in one pass: the four {@code cor}
     * chains read each offset vector once instead of once per row; each chain, and each sum, is
     * the one {@link #finish} forms.
     */
    final void finish4(int cols, float[] sums, float[] acc, int b, float[] out, int rows, int o, float[] lanes) {
        int units = cols / unitCols, c0 = 32 + (offsetsAfterScales ? units : 0);
        int s0 = b * units, s1 = s0 + units, s2 = s1 + units, s3 = s2 + units;
        FloatVector k0 = FloatVector.zero(F), k1 = k0, k2 = k0, k3 = k0;
        for (int g = 0; g < units; g += 8) {
            FloatVector c = FloatVector.fromArray(F, acc, c0 + g);
            k0 = c.fma(FloatVector.fromArray(F, sums, s0 + g), k0);
            k1 = c.fma(FloatVector.fromArray(F, sums, s1 + g), k1);
            k2 = c.fma(FloatVector.fromArray(F, sums, s2 + g), k2);
            k3 = c.fma(FloatVector.fromArray(F, sums, s3 + g), k3);
        }
        k0.intoArray(lanes, 0);
        k1.intoArray(lanes, 8);
        k2.intoArray(lanes, 16);
        k3.intoArray(lanes, 24);
        out[b * rows + o] = sum8(acc, 0) * accScale + sum8(lanes, 0) * corScale;
        out[(b + 1) * rows + o] = sum8(acc, 8) * accScale + sum8(lanes, 8) * corScale;
        out[(b + 2) * rows + o] = sum8(acc, 16) * accScale + sum8(lanes, 16) * corScale;
        out[(b + 3) * rows + o] = sum8(acc, 24) * accScale + sum8(lanes, 24) * corScale;
    }

    /**
     * Runs output rows {@code [oStart, oEnd)} of {@code w} over prepared input {@code in}. C2
     * compiles this loop on its own and binds the per-row calls below by their type profile: one
     * or two span formats per loaded model, so they are monomorphic or bimorphic. (A process
     * running all three span formats at once makes them megamorphic virtual calls, 5–6% of a
     * batch-1 pass on L2-resident weights in a harness; overriding this per format did not help
     * in the engine, where C2 would not inline the shared body into the overrides.)
     */
    final void walk(WeightMatrix w, long quants, int spans, SpanInput in, int nRows, float[] out, int oStart, int oEnd,
                    Scratch s) {
        // Accumulators, then scales and offsets: at most one each per 16 columns.
        if (s.spanAcc == null || s.spanAcc.length < 32 + w.cols() / 8) s.spanAcc = new float[32 + w.cols() / 8];
        float[] xs = in.scaled, sums = in.sums, acc = s.spanAcc;
        MemorySegment m = w.data();
        int cols = w.cols(), rows = w.rows();
        if (nRows == 1) {
            // Rows in order, one stream. (Rows from the chunk's two halves in turn, two streams
            // about 72 KiB apart, had measured +1–4% on AMD Zen 3; on an Intel Sapphire
            // Rapids-class VM they cost 22%: llama-1b Q4_0, batch 1, two threads, six alternating
            // runs, 12.2–12.4 against 15.1–16.3 tok/s.) Rows are independent: the order changes no result.
            int ahead = Prefetch.start(w, oStart, oEnd);
            for (int o = oStart; o < oEnd; o++) {
                // The row `ahead` rows on, while this one computes (see Prefetch).
                Prefetch.next(w, o, ahead, oEnd);
                long off = w.rowOffset(o);
                rowScales(m, off, cols, acc);
                row1(m, off, off + quants, spans, xs, 0, cols, acc);
                finish(cols, sums, acc, 0, 1, out, rows, o, s.lanes);
            }
            return;
        }
        // Batch rows four at a time, then two, then one; the first group streams the chunk from
        // memory (prefetched as at batch 1), the others find it in L2.
        int ahead = Prefetch.start(w, oStart, oEnd);
        for (int b = 0, n; b < nRows; b += n) {
            n = nRows - b >= 4 ? 4 : nRows - b >= 2 ? 2 : 1;
            for (int o = oStart; o < oEnd; o++) {
                if (b == 0) Prefetch.next(w, o, ahead, oEnd);
                long off = w.rowOffset(o);
                rowScales(m, off, cols, acc);
                if (n == 4) {
                    rows4(m, off, off + quants, spans, xs, b, cols, acc);
                    finish4(cols, sums, acc, b, out, rows, o, s.lanes);
                    continue;
                }
                if (n == 2) rows2(m, off, off + quants, spans, xs, b, cols, acc);
                else row1(m, off, off + quants, spans, xs, b, cols, acc);
                finish(cols, sums, acc, b, n, out, rows, o, s.lanes);
            }
        }
    }
}
