package dgr.gguf.codec;

import java.lang.foreign.MemorySegment;

/**
 * The search the IQ1/IQ2/IQ3 encoders share. A block's values fall into units that share one scale
 * code (16 or 32 values) and groups that share one codebook entry (or two, for the 4-value IQ3
 * codebooks). For each unit a float scale is searched — seven starting points around
 * {@code max|t| / largest value} and one {@code max|t| / level} per value the grid uses (so values
 * already on a grid find their scale), each followed by the nearest entries, one least-squares
 * update and the nearest entries again — then the block's f16 scale is the largest unit scale over the
 * largest code multiplier, and each unit takes the code whose decoded scale lies nearest its own.
 * Not ggml's quantizer (which weighs by an importance matrix and walks neighbour lists); any choice
 * here decodes the same in every engine, and the tests bound its error.
 */
final class IqFit {
    private IqFit() {}

    /** The offsets of the sign-and-magnitude formats: none. */
    static final float[] NO_SHIFT = {0f};

    private static final float[] STARTS = {0.6f, 0.7f, 0.8f, 0.9f, 1.0f, 1.1f, 1.25f};

    /**
     * Decodes a block through its integer form: {@code (d·scale)·q}, each product exact, so the
     * same floats as ggml's order of operations (IqCodecTest).
     */
    static void decode(IntegerBlock b, MemorySegment src, long off, float[] dst, int d) {
        int[][] s = SCRATCH.get();
        int[] scale = s[0], q = s[1];
        float dd = b.integers(src, off, scale, q);
        for (int i = 0; i < 256; i++) dst[d + i] = dd * scale[i / 16] * q[i];
    }

    /** Per-thread integer form of one block: decoding rows allocates nothing. */
    private static final ThreadLocal<int[][]> SCRATCH = ThreadLocal.withInitial(() -> new int[][] {new int[16], new int[256]});

    /** Entry {@code e}'s 8 values with {@code signs} (bit j: value j negative) into {@code q[at ..]}. */
    static void signed(IqGrid g, int e, int signs, int[] q, int at) {
        for (int j = 0; j < 8; j++) q[at + j] = (signs & 1 << j) != 0 ? -g.value(e, j) : g.value(e, j);
    }

    /** Two 4-value entries, then 8 signs over both, into {@code q[at ..]}. */
    static void signedPair(IqGrid g, int e1, int e2, int signs, int[] q, int at) {
        for (int j = 0; j < 4; j++) {
            q[at + j] = (signs & 1 << j) != 0 ? -g.value(e1, j) : g.value(e1, j);
            q[at + j + 4] = (signs & 1 << (j + 4)) != 0 ? -g.value(e2, j) : g.value(e2, j);
        }
    }

    /** The decoded scale of code {@code s} under block scale {@code dd}, computed as the decoder does. */
    interface Mul {
        float db(float dd, int s);
    }

    /** IQ2's scales: {@code d·(0.5 + s)·0.25}. */
    static final Mul IQ2_SCALE = (dd, s) -> dd * (0.5f + s) * 0.25f;
    /** IQ1's scales: {@code d·(2s + 1)}. */
    static final Mul IQ1_SCALE = (dd, s) -> dd * (2 * s + 1);

    /** How a format stores signs: none (IQ1's values carry them), all 8 per group, or 7 with the 8th implied by parity. */
    enum Signs { NONE, ALL, EVEN_NEGATIVES }

    /**
     * What one format's encoder searches: its codebook, its scale codes ({@code mul}, 0..{@code maxCode},
     * one per {@code unit} values), its signs, and the offset sets a unit may use ({@code {0}}
     * for the sign formats; IQ1_S tries {+1/8} and {−1/8} per 32 values, IQ1_M takes either per group).
     */
    record Shape(IqGrid grid, Mul mul, int maxCode, int unit, Signs signs, float[][] shiftSets) {}

    /**
     * One block's choices: the block scale {@code dd} (f16-exact), each unit's scale code and
     * chosen offset set, each codebook group's entry and offset within that set, each group of
     * 8's sign bits.
     */
    record Fit(float dd, int[] code, int[] unitSet, int[] entry, int[] shift, int[] signs) {}

    /**
     * The search every IQ encoder shares: targets (magnitudes with {@link #signs}, or the values
     * themselves), a scale per unit ({@link #scale}; with several offset sets the one of least
     * error, the first on a tie), the block scale and each unit's code, then each group's nearest
     * entry at its unit's decoded scale ({@link #pick}).
     */
    static Fit fit(Shape f, float[] src, int s) {
        IqGrid g = f.grid();
        int units = 256 / f.unit(), groups = 256 / g.dim;
        int[] signs = new int[32];
        float[] t = src;
        int o = s;
        if (f.signs() != Signs.NONE) {
            t = new float[256];
            o = 0;
            signs(src, s, 256, t, signs, f.signs() == Signs.EVEN_NEGATIVES);
        }
        float[] sigma = new float[units];
        int[] unitSet = new int[units];
        for (int u = 0; u < units; u++) {
            float[][] sets = f.shiftSets();
            float[] scales = new float[sets.length];
            for (int k = 0; k < sets.length; k++) scales[k] = scale(g, t, o + f.unit() * u, f.unit(), sets[k]);
            int best = 0;
            for (int k = 1; k < sets.length; k++) {
                if (error(g, t, o + f.unit() * u, f.unit(), sets[k], scales[k]) < error(g, t, o + f.unit() * u, f.unit(), sets[best], scales[best])) best = k;
            }
            unitSet[u] = best;
            sigma[u] = scales[best];
        }
        float dd = blockScale(sigma, f.mul(), f.maxCode());
        int[] code = new int[units], entry = new int[groups], shift = new int[groups];
        for (int u = 0; u < units; u++) {
            code[u] = code(dd, sigma[u], f.mul(), f.maxCode());
            float db = f.mul().db(dd, code[u]);
            for (int grp = u * f.unit() / g.dim; grp < (u + 1) * f.unit() / g.dim; grp++) {
                int pick = pick(g, t, o + g.dim * grp, db, f.shiftSets()[unitSet[u]]);
                entry[grp] = pick & 0xFFFF;
                shift[grp] = pick >>> 16;
            }
        }
        return new Fit(dd, code, unitSet, entry, shift, signs);
    }

    /**
     * Targets for the sign-and-magnitude codebooks: {@code t = |x|}, and the sign bits of each group
     * of 8 into {@code signs[g]}. With {@code evenNegatives} (formats that store 7 sign bits and
     * imply the 8th by parity) a group with an odd count flips the sign of its smallest value, whose
     * target then becomes {@code −|x|} so the search gives it the smallest magnitude.
     */
    private static void signs(float[] x, int s, int n, float[] t, int[] signs, boolean evenNegatives) {
        for (int g = 0; g < n / 8; g++) {
            int bits = 0, min = 0;
            for (int j = 0; j < 8; j++) {
                float v = x[s + 8 * g + j];
                t[8 * g + j] = Math.abs(v);
                if (v < 0) bits |= 1 << j;
                if (Math.abs(v) < Math.abs(x[s + 8 * g + min])) min = j;
            }
            if (evenNegatives && (Integer.bitCount(bits) & 1) != 0) {
                bits ^= 1 << min;
                t[8 * g + min] = -t[8 * g + min];
            }
            signs[g] = bits;
        }
    }

    /**
     * The scale for the {@code n} targets {@code t[o ..]} on grid {@code g}; {@code shifts} are the
     * constant offsets a group may take (IQ1's ±1/8; {@code {0}} elsewhere), chosen per group.
     */
    private static float scale(IqGrid g, float[] t, int o, int n, float[] shifts) {
        float amax = 0;
        for (int i = 0; i < n; i++) amax = Math.max(amax, Math.abs(t[o + i]));
        if (amax == 0) return 0;
        float vmax = 0;
        for (float sh : shifts) vmax = Math.max(vmax, Math.max(Math.abs(g.min + sh), Math.abs(g.max + sh)));
        float best = amax / vmax, bestErr = Float.POSITIVE_INFINITY;
        // Starts: around max|t| on the largest value, and max|t| on each value a grid uses (so
        // values already on a grid, at any of its levels, find their scale exactly).
        int[] levels = g.levels();
        for (int k = 0; k < STARTS.length + levels.length * shifts.length; k++) {
            float sigma;
            if (k < STARTS.length) {
                sigma = amax / vmax * STARTS[k];
            } else {
                int i = k - STARTS.length;
                float level = Math.abs(levels[i / shifts.length] + shifts[i % shifts.length]);
                if (level == 0) continue;
                sigma = amax / level;
            }
            sigma = leastSquares(g, t, o, n, shifts, sigma);
            if (!(sigma > 0)) continue;
            float err = error(g, t, o, n, shifts, sigma);
            if (err < bestErr) {
                bestErr = err;
                best = sigma;
            }
        }
        return best;
    }

    /** Nearest entries at {@code sigma}, then the scale that fits them best. */
    private static float leastSquares(IqGrid g, float[] t, int o, int n, float[] shifts, float sigma) {
        double tw = 0, ww = 0;
        for (int p = o; p < o + n; p += g.dim) {
            int pick = pick(g, t, p, sigma, shifts);
            int e = pick & 0xFFFF;
            float sh = shifts[pick >>> 16];
            for (int j = 0; j < g.dim; j++) {
                double w = g.value(e, j) + sh;
                tw += t[p + j] * w;
                ww += w * w;
            }
        }
        return ww > 0 ? (float) (tw / ww) : 0f;
    }

    private static float error(IqGrid g, float[] t, int o, int n, float[] shifts, float sigma) {
        float err = 0;
        for (int p = o; p < o + n; p += g.dim) {
            int pick = pick(g, t, p, sigma, shifts);
            int e = pick & 0xFFFF;
            float sh = shifts[pick >>> 16];
            for (int j = 0; j < g.dim; j++) {
                float r = t[p + j] - sigma * (g.value(e, j) + sh);
                err += r * r;
            }
        }
        return err;
    }

    /**
     * The entry (low 16 bits) and shift index (high bits) nearest to {@code t[p .. p + dim)} at
     * scale {@code sigma}; entry 0 and shift 0 when the scale is zero.
     */
    private static int pick(IqGrid g, float[] t, int p, float sigma, float[] shifts) {
        if (sigma == 0) return 0;
        float inv = 1 / sigma;
        int best = 0;
        float bestErr = Float.POSITIVE_INFINITY;
        for (int k = 0; k < shifts.length; k++) {
            int e = g.nearest(t, p, inv, shifts[k]);
            float err = 0;
            for (int j = 0; j < g.dim; j++) {
                float r = t[p + j] - sigma * (g.value(e, j) + shifts[k]);
                err += r * r;
            }
            if (err < bestErr) {
                bestErr = err;
                best = e | k << 16;
            }
        }
        return best;
    }

    /** The block scale: the largest unit scale over the largest code's multiplier, rounded to f16. */
    private static float blockScale(float[] sigma, Mul mul, int maxCode) {
        float smax = 0;
        for (float s : sigma) smax = Math.max(smax, s);
        return Float.float16ToFloat(Float.floatToFloat16(smax / mul.db(1f, maxCode)));
    }

    /** The code whose decoded scale under {@code dd} is nearest {@code sigma}. */
    private static int code(float dd, float sigma, Mul mul, int maxCode) {
        int best = 0;
        float bestDiff = Float.POSITIVE_INFINITY;
        for (int s = 0; s <= maxCode; s++) {
            float diff = Math.abs(mul.db(dd, s) - sigma);
            if (diff < bestDiff) {
                bestDiff = diff;
                best = s;
            }
        }
        return best;
    }
}
