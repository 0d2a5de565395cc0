package dgr.engine.kernel;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * {@code java-simd/1}: Vector API kernels (256-bit float lanes).
 *
 * <p>Every output element is reduced in one fixed order per weight type, whatever the batch size
 * or worker split, and ends with the 8-lane tree of {@link #sum8}:
 * <ul>
 * <li>Q4_0, Q4_1 and Q4_K matrices whose width is a multiple of 256 are repacked at load
 *     ({@link #prepare}) and follow {@link Q4Spans}'s order: the block order below over unsigned
 *     quants, the offsets (Q4_0's "− 8", Q4_K's mins) as one short dot product per output. Q6_K, Q5_K, Q3_K, Q2_K, Q5_0, Q5_1,
 *     IQ4_XS and IQ4_NL (each index as its grid value + 128) are
 *     repacked to a byte per quant and follow {@link ByteSpans}'s order: the same scheme per 16-value group, two groups joined before each add to the accumulator.
 *     (K-quant and IQ4_XS widths are always multiples of 256, so those are always repacked; Q4_0, Q4_1,
 *     Q5_0, Q5_1 and IQ4_NL with a non-finite f16 scale or min stay in file layout.)
 * <li>Q8_0, and Q4_0 of other widths (block order): per 32-value block the four 8-value chunks of
 *     integer weights are dotted with the activations into one partial ({@code mul}, then three
 *     {@code fma}), and the partial is scaled into the accumulator ({@code acc = fma(t, d, acc)});
 *     see {@link SimdQ4_0}, {@link SimdQ8_0}.
 * <li>Every other type, and any matrix left in file layout (chunk order): each weight row is
 *     dequantized exactly as ggml does into scratch (F16 and BF16 with vector operations,
 *     {@link SimdF32#decodeHalf}), walked in 8-value chunks, chunk {@code c} fused
 *     into accumulator {@code c & 1}, the two accumulators added lane-wise at the end.
 * </ul>
 * Kernels for 8, 4, 2 and 1 batch rows of one type follow the same per-element order, so the
 * batch size never changes a result.
 */
public final class SimdKernels implements Kernels {
    static final VectorSpecies<Float> F = FloatVector.SPECIES_256;

    @Override
    public String name() {
        return "java-simd";
    }

    /**
     * One line for benchmark reports on what speeds the kernels' memory access here: aligned
     * activations ({@link HeapAlignment}) and weights on huge pages ({@link NativeMemory}). Neither
     * changes a result.
     */
    public static String memoryReport() {
        return HeapAlignment.describe() + "; " + NativeMemory.describeHugePages() + "; " + Prefetch.DESCRIPTION + "; " + ArrayPrefetch.DESCRIPTION + "; "
                + Q8Native.DESCRIPTION + "; " + NativeAttention.DESCRIPTION;
    }

    @Override
    public WeightMatrix prepare(WeightMatrix w, java.lang.foreign.Arena arena) {
        if (w.layout() != WeightLayout.GGML) return w;
        if (Q4Spans.fits(w)) return releaseFilePages(w, Q4Spans.repack(w, arena));
        if (ByteSpans.fits(w)) return releaseFilePages(w, ByteSpans.repack(w, arena));
        return w;
    }

    /**
     * {@code repacked}, after dropping the file pages {@code from} was read through from this
     * process's resident memory ({@code MemorySegment.unload}: {@code madvise(MADV_DONTNEED)} on a
     * read-only file mapping), so a repacked model is resident once, not twice. Pages shared with a
     * neighbouring tensor, or read again later (tied embeddings' lookups), fault back in from the
     * page cache with the same bytes; memory that is not a file mapping is left alone.
     */
    static WeightMatrix releaseFilePages(WeightMatrix from, WeightMatrix repacked) {
        if (repacked != from && from.data().isNative() && from.data().isMapped()) from.data().unload();
        return repacked;
    }

    @Override
    public void matmul(WeightMatrix w, float[] x, int nRows, float[] out, int oStart, int oEnd, Scratch s) {
        if (Q4Spans.handles(w.layout())) {
            Q4Spans.matmul(w, x, nRows, out, oStart, oEnd, s);
            return;
        }
        if (ByteSpans.handles(w.layout())) {
            ByteSpans.matmul(w, x, nRows, out, oStart, oEnd, s);
            return;
        }
        switch (w.type()) {
            case Q4_0 -> SimdQ4_0.matmul(w, x, nRows, out, oStart, oEnd, s.lanes);
            case Q8_0 -> SimdQ8_0.matmul(w, x, nRows, out, oStart, oEnd, s);
            case F32 -> SimdF32.matmulSegment(w, x, nRows, out, oStart, oEnd, s.lanes);
            default -> {
                boolean half = w.type() == dgr.gguf.GgmlType.F16 || w.type() == dgr.gguf.GgmlType.BF16;
                for (int o = oStart; o < oEnd; o++) {
                    if (half) SimdF32.decodeHalf(w, o, s.row);
                    else RowDecoder.decodeRow(w, o, s.row, 0);
                    SimdF32.dotRows(s.row, w.cols(), x, nRows, out, w.rows(), o, s.lanes);
                }
            }
        }
    }

    @Override
    public boolean rowLanes() {
        return RowLanes.usable();
    }

    @Override
    public NativeAttention nativeAttention() {
        return NativeAttention.KERNEL;
    }

    /**
     * Eight positions per vector: lane {@code j} accumulates position {@code j}'s score over
     * {@code d} in order, so no lane reduction; each K vector is loaded once for up to four query
     * heads (grouped-query attention shares a K head among them).
     */
    @Override
    public void scores8(float[] q, int qo, int heads, int hd, float[] k, int kBase, float[] sc, int so, int scStride) {
        SimdAttention.scores1(q, qo, heads, hd, k, kBase, sc, so, scStride);
    }

    /** Up to four blocks side by side ({@link SimdAttention#scores}): each score's bits are {@link #scores8}'s. */
    @Override
    public void scores(float[] q, int qo, int heads, int hd, float[] k, int kBase, int blockStride, int blocks, float[] sc,
                       int so, int scStride) {
        SimdAttention.scores(q, qo, heads, hd, k, kBase, blockStride, blocks, sc, so, scStride);
    }

    /**
     * Per value index {@code j}: an 8-lane sum (lane = position within its block) in a register
     * over the page's blocks in order, each K vector loaded once for up to four heads, then its
     * lanes summed ({@link SimdKernels#sum8}, fixed order) and added to the output. The last block's
     * positions past {@code t1} are masked out of both the weights and K.
     */
    @Override
    public void weightedK(float[] w, int wo, int wStride, int heads, int t0, int t1, float[] k, int kBase, int kvd, int width,
                          float[] out, int oo, int hd, float[] lanes) {
        int blocks = (t1 - t0 + 7) / 8;
        jdk.incubator.vector.VectorMask<Float> last = F.indexInRange(0, (t1 - t0) - 8 * (blocks - 1));
        int g = 0;
        for (; g + 2 <= heads; g += 2) {
            int w0 = wo + g * wStride + t0, w1 = w0 + wStride, o0 = oo + g * hd, o1 = o0 + hd;
            for (int j = 0; j < width; j++) {
                FloatVector a0 = FloatVector.zero(F), a1 = a0;
                int b = 0;
                for (; b < blocks - 1; b++) {
                    FloatVector kv = FloatVector.fromArray(F, k, kBase + b * 8 * kvd + 8 * j);
                    a0 = kv.fma(FloatVector.fromArray(F, w, w0 + 8 * b), a0);
                    a1 = kv.fma(FloatVector.fromArray(F, w, w1 + 8 * b), a1);
                }
                FloatVector kv = FloatVector.fromArray(F, k, kBase + b * 8 * kvd + 8 * j, last);
                a0 = kv.fma(FloatVector.fromArray(F, w, w0 + 8 * b, last), a0);
                a1 = kv.fma(FloatVector.fromArray(F, w, w1 + 8 * b, last), a1);
                a0.intoArray(lanes, 0);
                out[o0 + j] += sum8(lanes);
                a1.intoArray(lanes, 0);
                out[o1 + j] += sum8(lanes);
            }
        }
        for (; g < heads; g++) {
            int w0 = wo + g * wStride + t0, o0 = oo + g * hd;
            for (int j = 0; j < width; j++) {
                FloatVector a0 = FloatVector.zero(F);
                int b = 0;
                for (; b < blocks - 1; b++) {
                    a0 = FloatVector.fromArray(F, k, kBase + b * 8 * kvd + 8 * j).fma(FloatVector.fromArray(F, w, w0 + 8 * b), a0);
                }
                a0 = FloatVector.fromArray(F, k, kBase + b * 8 * kvd + 8 * j, last).fma(FloatVector.fromArray(F, w, w0 + 8 * b, last), a0);
                a0.intoArray(lanes, 0);
                out[o0 + j] += sum8(lanes);
            }
        }
    }

    /**
     * Each output chunk of 8 stays in a register over the page's positions ({@code fma(v, w, acc)}
     * in position order, the same steps as adding one position at a time); each V vector is loaded
     * once for up to four heads.
     */
    @Override
    public void weightedV(float[] w, int wo, int wStride, int heads, int t0, int t1, float[] v, int vBase, int kvd,
                          float[] out, int oo, int hd) {
        SimdAttention.weightedV(w, wo, wStride, heads, t0, t1, v, vBase, kvd, out, oo, hd);
    }

    /** The fixed lane reduction: ((l0+l1)+(l2+l3))+((l4+l5)+(l6+l7)). */
    static float sum8(float[] l) {
        return sum8(l, 0);
    }

    /**
     * {@link #sum8(float[])} of the eight lanes at {@code l[o ..]}. Written as two halves so each
     * method stays under C2's 35-bytecode inlining limit for call sites that are not hot (one call
     * per output row in the span kernels' {@code finish}); the sums and their order are the same.
     */
    static float sum8(float[] l, int o) {
        return sum4(l, o) + sum4(l, o + 4);
    }

    /** {@code (l[o] + l[o+1]) + (l[o+2] + l[o+3])}. */
    private static float sum4(float[] l, int o) {
        return (l[o] + l[o + 1]) + (l[o + 2] + l[o + 3]);
    }
}
