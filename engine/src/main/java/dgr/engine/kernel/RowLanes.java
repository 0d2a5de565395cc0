package dgr.engine.kernel;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * Attention of a run of up to 16 prompt rows with the rows in the lanes of 512-bit vectors (on AVX2
 * only in the native image, {@link #usable}): a score vector holds 16 rows' scores against one key
 * position, so each K value is loaded once (broadcast) for 16 rows and four query heads, and the online
 * softmax's maximum, weights and sums run lane by lane with no sum across lanes. Each element keeps the
 * sequence of float operations of {@link Kernels#scores8} and {@link OnlineSoftmax#tile} (a score: FMAs over {@code d} in order from
 * +0, then times the scale; a row's sum: per lane of 8 positions the blocks in order, then the same
 * tree of the 8), so the bits are the one-row path's: positions a row does not see add exact zeros.
 *
 * <p>Layouts, {@code R = }{@link #LANES}: transposed queries {@code qT[(g·hd + d)·R + r]} (query head
 * {@code g} of the run's K/V heads in order, row {@code r}); a tile's scores and then weights
 * {@code sT[sb + (g·tile + p)·R + r]} (position {@code p} of the tile); running maxima and sums
 * {@code state[o + r]} and {@code state[o + R + r]} per head. Callers start {@code qT}, {@code sT} and the
 * outputs at {@link HeapAlignment#FLOAT_PAD} (so {@code sb}): these layouts' 256-bit loads and stores are then
 * 32-byte aligned, where from element 0 every other one crossed a cache line (the AVX2 image's prompt
 * scores ran at 53 GFLOP/s in the engine, 77 with the same arrays aligned).
 */
public final class RowLanes {
    private RowLanes() {}

    /** Rows per vector. */
    public static final int LANES = 16;
    static final VectorSpecies<Float> W = FloatVector.SPECIES_512;
    /** Whether this CPU runs 512-bit vectors natively (else 16 lanes would be emulated). */
    public static final boolean ON = SimdAttention.WIDE;

    /**
     * Whether a prompt run's rows may go in lanes here: where 512-bit vectors run (these kernels, or the
     * AVX-512 image's), or where a native attention image runs without them (every image has the
     * operations; the AVX2 one takes the 16 lanes as two halves of 8 rows). Elsewhere this class's 16
     * lanes would be emulated, far slower than one row at a time.
     */
    public static boolean usable() {
        return ON || NativeAttention.KERNEL != null;
    }

    /**
     * {@code qT[to + i·R + r] = q[(r0 + r)·qd + qo + i]} for {@code i < n}, {@code r < rows}; lanes from
     * {@code rows} on are 0.
     */
    public static void transpose(float[] q, int qd, int r0, int rows, int qo, int n, float[] qT, int to) {
        java.util.Arrays.fill(qT, to, to + n * LANES, 0f);
        for (int r = 0; r < rows; r++) {
            int src = (r0 + r) * qd + qo;
            for (int i = 0; i < n; i++) qT[to + i * LANES + r] = q[src + i];
        }
    }

    /**
     * Scores of every lane's row for {@code heads} query heads (four at a time, then one), their queries at
     * {@code qT[qo ..]}, against tile positions {@code [p0, p1)} (multiples of 8) of a K page laid out
     * position-minor (position {@code p}'s element {@code d} at {@code kBase + (p/8)·blockStride + 8d + p%8}),
     * times {@code scale}, into {@code sT} from {@code sb} (head {@code g}, position {@code p} at {@code sb + (g·tile + p)·R}).
     */
    public static void scores(float[] qT, int qo, int heads, int hd, float[] k, int kBase, int blockStride, int p0, int p1,
                              float scale, float[] sT, int sb, int tile) {
        int g = 0;
        for (; g + 4 <= heads; g += 4) {
            for (int p = p0; p < p1; p += 4) {
                scores4x4(qT, qo + g * hd * LANES, hd, k, kBase + (p >> 3) * blockStride + (p & 7), scale, sT,
                        sb + (g * tile + p) * LANES, tile * LANES);
            }
        }
        for (; g < heads; g++) {
            for (int p = p0; p < p1; p += 8) {
                scores1x8(qT, qo + g * hd * LANES, hd, k, kBase + (p >> 3) * blockStride, scale, sT, sb + (g * tile + p) * LANES);
            }
        }
    }

    /** One head × one block of 8 positions (8 chains): the heads left over from groups of four. */
    private static void scores1x8(float[] qT, int q0, int hd, float[] k, int kb, float scale, float[] sT, int so) {
        FloatVector z = FloatVector.zero(W);
        FloatVector a0 = z, a1 = z, a2 = z, a3 = z, a4 = z, a5 = z, a6 = z, a7 = z;
        for (int d = 0; d < hd; d++) {
            // Indices from the loop counter alone, so C2 hoists their range checks (4–5% on this kernel).
            int qi = q0 + d * LANES, ki = kb + d * 8;
            FloatVector x = FloatVector.fromArray(W, qT, qi);
            a0 = x.fma(FloatVector.broadcast(W, k[ki]), a0);
            a1 = x.fma(FloatVector.broadcast(W, k[ki + 1]), a1);
            a2 = x.fma(FloatVector.broadcast(W, k[ki + 2]), a2);
            a3 = x.fma(FloatVector.broadcast(W, k[ki + 3]), a3);
            a4 = x.fma(FloatVector.broadcast(W, k[ki + 4]), a4);
            a5 = x.fma(FloatVector.broadcast(W, k[ki + 5]), a5);
            a6 = x.fma(FloatVector.broadcast(W, k[ki + 6]), a6);
            a7 = x.fma(FloatVector.broadcast(W, k[ki + 7]), a7);
        }
        a0.mul(scale).intoArray(sT, so);
        a1.mul(scale).intoArray(sT, so + LANES);
        a2.mul(scale).intoArray(sT, so + 2 * LANES);
        a3.mul(scale).intoArray(sT, so + 3 * LANES);
        a4.mul(scale).intoArray(sT, so + 4 * LANES);
        a5.mul(scale).intoArray(sT, so + 5 * LANES);
        a6.mul(scale).intoArray(sT, so + 6 * LANES);
        a7.mul(scale).intoArray(sT, so + 7 * LANES);
    }

    /** Four heads × four positions (16 chains), each K value broadcast once for 16 rows and four heads. */
    private static void scores4x4(float[] qT, int q0, int hd, float[] k, int kb, float scale, float[] sT, int so, int gs) {
        int hs = hd * LANES;
        FloatVector z = FloatVector.zero(W);
        FloatVector a00 = z, a01 = z, a02 = z, a03 = z, a10 = z, a11 = z, a12 = z, a13 = z;
        FloatVector a20 = z, a21 = z, a22 = z, a23 = z, a30 = z, a31 = z, a32 = z, a33 = z;
        for (int d = 0; d < hd; d++) {
            // Indices from the loop counter alone, so C2 hoists their range checks (4–5% on this kernel).
            int qi = q0 + d * LANES, ki = kb + d * 8;
            FloatVector k0 = FloatVector.broadcast(W, k[ki]), k1 = FloatVector.broadcast(W, k[ki + 1]);
            FloatVector k2 = FloatVector.broadcast(W, k[ki + 2]), k3 = FloatVector.broadcast(W, k[ki + 3]);
            FloatVector x = FloatVector.fromArray(W, qT, qi);
            a00 = x.fma(k0, a00);
            a01 = x.fma(k1, a01);
            a02 = x.fma(k2, a02);
            a03 = x.fma(k3, a03);
            x = FloatVector.fromArray(W, qT, qi + hs);
            a10 = x.fma(k0, a10);
            a11 = x.fma(k1, a11);
            a12 = x.fma(k2, a12);
            a13 = x.fma(k3, a13);
            x = FloatVector.fromArray(W, qT, qi + 2 * hs);
            a20 = x.fma(k0, a20);
            a21 = x.fma(k1, a21);
            a22 = x.fma(k2, a22);
            a23 = x.fma(k3, a23);
            x = FloatVector.fromArray(W, qT, qi + 3 * hs);
            a30 = x.fma(k0, a30);
            a31 = x.fma(k1, a31);
            a32 = x.fma(k2, a32);
            a33 = x.fma(k3, a33);
        }
        a00.mul(scale).intoArray(sT, so);
        a01.mul(scale).intoArray(sT, so + LANES);
        a02.mul(scale).intoArray(sT, so + 2 * LANES);
        a03.mul(scale).intoArray(sT, so + 3 * LANES);
        a10.mul(scale).intoArray(sT, so + gs);
        a11.mul(scale).intoArray(sT, so + gs + LANES);
        a12.mul(scale).intoArray(sT, so + gs + 2 * LANES);
        a13.mul(scale).intoArray(sT, so + gs + 3 * LANES);
        a20.mul(scale).intoArray(sT, so + 2 * gs);
        a21.mul(scale).intoArray(sT, so + 2 * gs + LANES);
        a22.mul(scale).intoArray(sT, so + 2 * gs + 2 * LANES);
        a23.mul(scale).intoArray(sT, so + 2 * gs + 3 * LANES);
        a30.mul(scale).intoArray(sT, so + 3 * gs);
        a31.mul(scale).intoArray(sT, so + 3 * gs + LANES);
        a32.mul(scale).intoArray(sT, so + 3 * gs + 2 * LANES);
        a33.mul(scale).intoArray(sT, so + 3 * gs + 3 * LANES);
    }

    /**
     * One tile's online-softmax step of one head for every lane: scores at {@code sT[base + p·R]} for
     * {@code p} in {@code [p0, p1)} (multiples of 8) become weights {@code e^(s − m)}; where
     * {@code masked}, a lane's positions outside {@code [lo[r], hi[r])} (relative to the tile) first
     * become −∞, so weight 0. The running maximum and sum at {@code state[so ..]} are updated and the
     * factor the row's output must be rescaled by goes to {@code alpha[ao + r]} (0 where the row had
     * no maximum yet; exactly 1 where the tile holds none of its positions). {@code sums} is scratch
     * of {@code 9·R} floats.
     */
    public static void softmax(float[] sT, int base, int p0, int p1, boolean masked, float[] lo, float[] hi, float[] state, int so,
                               float[] alpha, int ao, float[] sums) {
        // Four small steps, vectors passed between them through memory (no vector crosses a call: Exp
        // says why): as one method, C2 did not inline the vector exp into it (gigabytes of garbage per prompt).
        tileMax(sT, base, p0, p1, masked, lo, hi, alpha, ao);
        newMax(state, so, alpha, ao, sums);
        weights(sT, base, p0, p1, sums);
        newSum(state, so, alpha, ao, sums);
    }

    /** Each lane's maximum over the tile into {@code mx[mo ..]}, its positions outside {@code [lo, hi)} first set to −∞ where {@code masked}. */
    private static void tileMax(float[] sT, int base, int p0, int p1, boolean masked, float[] lo, float[] hi, float[] mx, int mo) {
        FloatVector negInf = FloatVector.broadcast(W, Float.NEGATIVE_INFINITY), m = negInf;
        if (masked) {
            FloatVector loV = FloatVector.fromArray(W, lo, 0), hiV = FloatVector.fromArray(W, hi, 0);
            for (int p = p0; p < p1; p++) {
                FloatVector pv = FloatVector.broadcast(W, (float) p);
                VectorMask<Float> in = pv.compare(VectorOperators.GE, loV).and(pv.compare(VectorOperators.LT, hiV));
                FloatVector s = negInf.blend(FloatVector.fromArray(W, sT, base + p * LANES), in);
                s.intoArray(sT, base + p * LANES);
                m = m.max(s);
            }
        } else {
            for (int p = p0; p < p1; p++) m = m.max(FloatVector.fromArray(W, sT, base + p * LANES));
        }
        m.intoArray(mx, mo);
    }

    /**
     * The new running maximum from the tile's ({@code alpha[ao ..]} on entry) into the state, the
     * rescale factor into {@code alpha[ao ..]}, and the maximum the weights subtract (0 for a lane
     * with none yet, whose scores are all −∞) into {@code sums[8R ..]}.
     */
    private static void newMax(float[] state, int so, float[] alpha, int ao, float[] sums) {
        FloatVector mOld = FloatVector.fromArray(W, state, so), m = mOld.max(FloatVector.fromArray(W, alpha, ao));
        VectorMask<Float> none = mOld.compare(VectorOperators.EQ, Float.NEGATIVE_INFINITY);
        // e^(m_old − m), 0 (e^−∞) for a lane with no maximum before this tile, through the array: no
        // vector crosses a call (Exp says why).
        mOld.sub(m).blend(Float.NEGATIVE_INFINITY, none).intoArray(alpha, ao);
        m.intoArray(state, so);
        m.blend(0f, m.compare(VectorOperators.EQ, Float.NEGATIVE_INFINITY)).intoArray(sums, 8 * LANES);
        Exp.exp(alpha, ao, ao + LANES, 0f);
    }

    /** Weights {@code e^(s − m)} in place, summed per lane of 8 positions into {@code sums[(p % 8)·R ..]} in block order from +0. */
    private static void weights(float[] sT, int base, int p0, int p1, float[] sums) {
        java.util.Arrays.fill(sums, 0, 8 * LANES, 0f);
        FloatVector m = FloatVector.fromArray(W, sums, 8 * LANES);
        for (int p = p0; p < p1; p++) FloatVector.fromArray(W, sT, base + p * LANES).sub(m).intoArray(sT, base + p * LANES);
        Exp.exp(sT, base + p0 * LANES, base + p1 * LANES, 0f);
        for (int p = p0; p < p1; p++) {
            int l = (p & 7) * LANES;
            FloatVector.fromArray(W, sums, l).add(FloatVector.fromArray(W, sT, base + p * LANES)).intoArray(sums, l);
        }
    }

    /** The running sum: the old one times the rescale factor, plus the 8 lanes' sums in the one-row tile's tree. */
    private static void newSum(float[] state, int so, float[] alpha, int ao, float[] sums) {
        FloatVector s0 = FloatVector.fromArray(W, sums, 0), s1 = FloatVector.fromArray(W, sums, LANES);
        FloatVector s2 = FloatVector.fromArray(W, sums, 2 * LANES), s3 = FloatVector.fromArray(W, sums, 3 * LANES);
        FloatVector s4 = FloatVector.fromArray(W, sums, 4 * LANES), s5 = FloatVector.fromArray(W, sums, 5 * LANES);
        FloatVector s6 = FloatVector.fromArray(W, sums, 6 * LANES), s7 = FloatVector.fromArray(W, sums, 7 * LANES);
        FloatVector tree = s0.add(s1).add(s2.add(s3)).add(s4.add(s5).add(s6.add(s7)));
        FloatVector.fromArray(W, state, so + LANES).mul(FloatVector.fromArray(W, alpha, ao)).add(tree).intoArray(state, so + LANES);
    }

    /**
     * {@link Kernels#weightedV} for every lane's row at once, the outputs transposed like the queries:
     * {@code outT[ob + (g·hd + d)·R + r]} (head {@code g}, element {@code d}, row {@code r}) first times
     * {@code alpha[g·R + r]} (the tile's rescale factor; exact where it is 1), then plus
     * {@code sT[sb + (g·tile + p)·R + r] · v[vBase + (p − p0)·vStride + d]} for {@code p} in {@code [p0, p1)} in
     * order, one FMA each. Position {@code p}'s weights are one vector for the 16 rows and its V
     * values broadcast, where one row at a time loaded each V row 16 times and each weight alone. A
     * row's positions outside its own range carry weight 0 ({@link #softmax} masked them), so its FMAs
     * there add exact zeros and its bits are the one-row path's, as long as the V values those positions
     * hold are finite (0 · ∞ would be NaN): they are values of the run's own rows.
     */
    public static void weightedVT(float[] sT, int sb, int tile, int heads, int p0, int p1, float[] v, int vBase, int vStride,
                                  float[] outT, int ob, int hd, float[] alpha) {
        int g = 0;
        for (; g + 4 <= heads; g += 4) {
            for (int d = 0; d < hd; d += 4) weighted4x4(sT, sb, tile, g, p0, p1, v, vBase + d, vStride, outT, ob + (g * hd + d) * LANES, hd, alpha);
        }
        for (; g < heads; g++) {
            for (int d = 0; d < hd; d += 4) weighted1x4(sT, sb, tile, g, p0, p1, v, vBase + d, vStride, outT, ob + (g * hd + d) * LANES, alpha);
        }
    }

    /** Four heads × four elements (16 chains): per position four weight vectors and four broadcast V values. */
    private static void weighted4x4(float[] sT, int sb, int tile, int g, int p0, int p1, float[] v, int vb, int vStride, float[] outT,
                                    int o, int hd, float[] alpha) {
        int hs = hd * LANES, ws = tile * LANES;
        FloatVector al = FloatVector.fromArray(W, alpha, g * LANES);
        FloatVector a00 = FloatVector.fromArray(W, outT, o).mul(al), a01 = FloatVector.fromArray(W, outT, o + LANES).mul(al);
        FloatVector a02 = FloatVector.fromArray(W, outT, o + 2 * LANES).mul(al), a03 = FloatVector.fromArray(W, outT, o + 3 * LANES).mul(al);
        al = FloatVector.fromArray(W, alpha, (g + 1) * LANES);
        FloatVector a10 = FloatVector.fromArray(W, outT, o + hs).mul(al), a11 = FloatVector.fromArray(W, outT, o + hs + LANES).mul(al);
        FloatVector a12 = FloatVector.fromArray(W, outT, o + hs + 2 * LANES).mul(al), a13 = FloatVector.fromArray(W, outT, o + hs + 3 * LANES).mul(al);
        al = FloatVector.fromArray(W, alpha, (g + 2) * LANES);
        FloatVector a20 = FloatVector.fromArray(W, outT, o + 2 * hs).mul(al), a21 = FloatVector.fromArray(W, outT, o + 2 * hs + LANES).mul(al);
        FloatVector a22 = FloatVector.fromArray(W, outT, o + 2 * hs + 2 * LANES).mul(al), a23 = FloatVector.fromArray(W, outT, o + 2 * hs + 3 * LANES).mul(al);
        al = FloatVector.fromArray(W, alpha, (g + 3) * LANES);
        FloatVector a30 = FloatVector.fromArray(W, outT, o + 3 * hs).mul(al), a31 = FloatVector.fromArray(W, outT, o + 3 * hs + LANES).mul(al);
        FloatVector a32 = FloatVector.fromArray(W, outT, o + 3 * hs + 2 * LANES).mul(al), a33 = FloatVector.fromArray(W, outT, o + 3 * hs + 3 * LANES).mul(al);
        for (int p = p0, vo = vb, wo = sb + (g * tile + p0) * LANES; p < p1; p++, vo += vStride, wo += LANES) {
            FloatVector v0 = FloatVector.broadcast(W, v[vo]), v1 = FloatVector.broadcast(W, v[vo + 1]);
            FloatVector v2 = FloatVector.broadcast(W, v[vo + 2]), v3 = FloatVector.broadcast(W, v[vo + 3]);
            FloatVector w = FloatVector.fromArray(W, sT, wo);
            a00 = w.fma(v0, a00);
            a01 = w.fma(v1, a01);
            a02 = w.fma(v2, a02);
            a03 = w.fma(v3, a03);
            w = FloatVector.fromArray(W, sT, wo + ws);
            a10 = w.fma(v0, a10);
            a11 = w.fma(v1, a11);
            a12 = w.fma(v2, a12);
            a13 = w.fma(v3, a13);
            w = FloatVector.fromArray(W, sT, wo + 2 * ws);
            a20 = w.fma(v0, a20);
            a21 = w.fma(v1, a21);
            a22 = w.fma(v2, a22);
            a23 = w.fma(v3, a23);
            w = FloatVector.fromArray(W, sT, wo + 3 * ws);
            a30 = w.fma(v0, a30);
            a31 = w.fma(v1, a31);
            a32 = w.fma(v2, a32);
            a33 = w.fma(v3, a33);
        }
        a00.intoArray(outT, o);
        a01.intoArray(outT, o + LANES);
        a02.intoArray(outT, o + 2 * LANES);
        a03.intoArray(outT, o + 3 * LANES);
        a10.intoArray(outT, o + hs);
        a11.intoArray(outT, o + hs + LANES);
        a12.intoArray(outT, o + hs + 2 * LANES);
        a13.intoArray(outT, o + hs + 3 * LANES);
        a20.intoArray(outT, o + 2 * hs);
        a21.intoArray(outT, o + 2 * hs + LANES);
        a22.intoArray(outT, o + 2 * hs + 2 * LANES);
        a23.intoArray(outT, o + 2 * hs + 3 * LANES);
        a30.intoArray(outT, o + 3 * hs);
        a31.intoArray(outT, o + 3 * hs + LANES);
        a32.intoArray(outT, o + 3 * hs + 2 * LANES);
        a33.intoArray(outT, o + 3 * hs + 3 * LANES);
    }

    /** One head × four elements: the heads left over from groups of four. */
    private static void weighted1x4(float[] sT, int sb, int tile, int g, int p0, int p1, float[] v, int vb, int vStride, float[] outT, int o,
                                    float[] alpha) {
        FloatVector al = FloatVector.fromArray(W, alpha, g * LANES);
        FloatVector a0 = FloatVector.fromArray(W, outT, o).mul(al), a1 = FloatVector.fromArray(W, outT, o + LANES).mul(al);
        FloatVector a2 = FloatVector.fromArray(W, outT, o + 2 * LANES).mul(al), a3 = FloatVector.fromArray(W, outT, o + 3 * LANES).mul(al);
        for (int p = p0, vo = vb, wo = sb + (g * tile + p0) * LANES; p < p1; p++, vo += vStride, wo += LANES) {
            FloatVector w = FloatVector.fromArray(W, sT, wo);
            a0 = w.fma(FloatVector.broadcast(W, v[vo]), a0);
            a1 = w.fma(FloatVector.broadcast(W, v[vo + 1]), a1);
            a2 = w.fma(FloatVector.broadcast(W, v[vo + 2]), a2);
            a3 = w.fma(FloatVector.broadcast(W, v[vo + 3]), a3);
        }
        a0.intoArray(outT, o);
        a1.intoArray(outT, o + LANES);
        a2.intoArray(outT, o + 2 * LANES);
        a3.intoArray(outT, o + 3 * LANES);
    }

    /**
     * {@code out[(r0 + r)·qd + qo + i] = outT[from + i·R + r]} for {@code i < n}, {@code r < rows}:
     * {@link #transpose}'s inverse.
     */
    public static void untranspose(float[] outT, int from, int rows, int n, float[] out, int qd, int r0, int qo) {
        for (int r = 0; r < rows; r++) {
            int dst = (r0 + r) * qd + qo;
            for (int i = 0; i < n; i++) out[dst + i] = outT[from + i * LANES + r];
        }
    }
}
