package dgr.engine.kernel;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The native prompt runs (rows in lanes) against {@link RowLanes}, whose bits {@code RowLanesTest} ties to
 * the one-row kernels: scores and weighted V rows bit for bit, for query heads in groups of four and
 * left over, several head sizes, every start and end of the positions the engine passes, at offsets inside
 * the arrays, on values of mixed magnitudes with zeros (a masked lane's weights). Every image the CPU
 * runs (AVX-512 and AVX2, whose halves of 8 rows must give the same bits); skipped where none does, saying why.
 */
class NativeRowLanesTest {
    private static final int TILE = 64, R = RowLanes.LANES;

    @ParameterizedTest(name = "heads {0} hd {1} f32 page {2}")
    @CsvSource({"4, 64, false", "4, 64, true", "1, 64, false", "5, 16, true", "8, 128, false", "3, 20, false", "6, 32, true"})
    void scoresAreRowLanesScores(int heads, int hd, boolean pageInPlace) {
        for (NativeAttention kernel : kernels()) {
            SplittableRandom rnd = new SplittableRandom(heads * 31L + hd);
            // A float32 page holds every K/V head side by side (block stride 8·kvd); a widened tile one head (8·hd).
            int kvHeads = pageInPlace ? 3 : 1, blockStride = 8 * hd * kvHeads, kBase = pageInPlace ? 8 * hd : 0;
            float[] k = randomFloats(rnd, TILE * hd * kvHeads + 8);
            float[] qT = randomFloats(rnd, 5 * R + heads * hd * R);
            int qo = 5 * R;
            float scale = 0.125f + (float) rnd.nextDouble();
            int sb = 4;  // the scores from an offset, as the engine's start on a 32-byte boundary
            for (int p0 = 0; p0 < TILE; p0 += 8) {
                for (int p1 = p0 + 8; p1 <= TILE; p1 += 8 * (1 + p1 / 24)) {
                    float[] got = new float[sb + heads * TILE * R], want = new float[sb + heads * TILE * R];
                    Arrays.fill(got, Float.NaN);
                    Arrays.fill(want, Float.NaN);
                    RowLanes.scores(qT, qo, heads, hd, k, kBase, blockStride, p0, p1, scale, want, sb, TILE);
                    kernel.laneScores(seg(qT), qo, heads, hd, seg(k), kBase, blockStride, p0, p1, scale, seg(got), sb, TILE);
                    assertThat(bits(got)).as("%s, positions [%d, %d)", kernel.variant, p0, p1).isEqualTo(bits(want));
                }
            }
        }
    }

    @ParameterizedTest(name = "heads {0} hd {1} f32 page {2}")
    @CsvSource({"4, 64, false", "4, 64, true", "1, 64, false", "5, 16, true", "8, 128, false", "3, 20, false", "6, 32, true"})
    void weightedRowsAreRowLanesWeightedRows(int heads, int hd, boolean pageInPlace) {
        for (NativeAttention kernel : kernels()) {
            SplittableRandom rnd = new SplittableRandom(heads * 57L + hd);
            int vStride = pageInPlace ? 3 * hd : hd, vHead = pageInPlace ? hd : 0;
            float[] v = randomFloats(rnd, TILE * vStride + 4);
            int sb = 12;
            float[] sT = randomFloats(rnd, sb + heads * TILE * R);
            for (int i = 0; i < sT.length; i += 7) sT[i] = 0f;
            float[] alpha = randomFloats(rnd, heads * R);
            alpha[0] = 1f;
            if (heads > 1) alpha[R + 3] = 0f;
            int ob = 3 * R;
            for (int p0 : new int[] {0, 1, 7, 8, 33, 63}) {
                for (int p1 = p0; p1 <= TILE; p1 += 1 + p1 / 5) {
                    float[] want = randomFloats(rnd, ob + heads * hd * R + R), got = want.clone();
                    int vBase = p0 * vStride + vHead;
                    RowLanes.weightedVT(sT, sb, TILE, heads, p0, p1, v, vBase, vStride, want, ob, hd, alpha);
                    kernel.laneWeighted(seg(sT), sb, TILE, heads, p0, p1, seg(v), vBase, vStride, seg(got), ob, hd, seg(alpha));
                    assertThat(bits(got)).as("%s, positions [%d, %d)", kernel.variant, p0, p1).isEqualTo(bits(want));
                }
            }
        }
    }

    @ParameterizedTest(name = "heads {0} masked {1}")
    @CsvSource({"4, false", "4, true", "1, true", "3, false"})
    void softmaxIsRowLanesSoftmax(int heads, boolean masked) {
        for (NativeAttention kernel : kernels()) {
            SplittableRandom rnd = new SplittableRandom(heads * 7L + (masked ? 1 : 0));
            for (int round = 0; round < 40; round++) {
                int p0 = 8 * rnd.nextInt(8), p1 = p0 + 8 * (1 + rnd.nextInt((TILE - p0) / 8));
                // Scores as attention gives them: spread out, some far below the rest (weights under e^-87 are 0), some ±0.
                int sb = 4;
                float[] sT = new float[sb + heads * TILE * R];
                for (int i = 0; i < sT.length; i++) {
                    int kind = rnd.nextInt(60);
                    sT[i] = kind == 0 ? 0f : kind == 1 ? -0f : kind == 2 ? -200f : (float) (rnd.nextGaussian() * 8);
                }
                // Now and then a NaN score (its lane's weights and sums become NaN the same way on both sides).
                if (round % 8 == 7) sT[sb + (p0 + rnd.nextInt(p1 - p0)) * R + rnd.nextInt(R)] = Float.NaN;
                float[] lo = new float[R], hi = new float[R];
                for (int r = 0; r < R; r++) {
                    int a = rnd.nextInt(TILE + 1), b = rnd.nextInt(TILE + 1);
                    lo[r] = Math.min(a, b);
                    hi[r] = r % 5 == 4 ? lo[r] : Math.max(a, b);  // some lanes see no position of the tile
                }
                // Running state: some lanes with no maximum yet (−∞, sum 0), some with one above or below the tile's.
                int so = 2 * R;
                float[] state = new float[so + heads * 2 * R];
                for (int g = 0; g < heads; g++) {
                    for (int r = 0; r < R; r++) {
                        boolean none = rnd.nextInt(4) == 0;
                        state[so + g * 2 * R + r] = none ? Float.NEGATIVE_INFINITY : (float) (rnd.nextGaussian() * 10);
                        state[so + g * 2 * R + R + r] = none ? 0f : (float) (rnd.nextDouble() * 30);
                    }
                }
                float[] wantS = sT.clone(), wantState = state.clone(), wantAlpha = new float[heads * R], sums = new float[9 * R];
                for (int g = 0; g < heads; g++) {
                    RowLanes.softmax(wantS, sb + g * TILE * R, p0, p1, masked, lo, hi, wantState, so + g * 2 * R, wantAlpha, g * R, sums);
                }
                float[] alpha = new float[heads * R];
                kernel.laneSoftmax(seg(sT), sb, heads, TILE, p0, p1, masked, seg(lo), seg(hi), seg(state), so, seg(alpha));
                assertThat(bits(sT)).as("%s, weights, positions [%d, %d)", kernel.variant, p0, p1).isEqualTo(bits(wantS));
                assertThat(bits(state)).as("%s, running maxima and sums", kernel.variant).isEqualTo(bits(wantState));
                assertThat(bits(alpha)).as("%s, rescale factors", kernel.variant).isEqualTo(bits(wantAlpha));
            }
        }
    }

    /** Every image this CPU runs, each loaded apart from the one the engine took. */
    private static List<NativeAttention> kernels() {
        assumeTrue(CodePage.unavailable() == null, CodePage.unavailable());
        List<NativeAttention.Variant> runnable;
        try {
            runnable = NativeAttention.runnable();
        } catch (java.io.IOException e) {
            throw new AssertionError("reading the CPU's flags", e);
        }
        assumeTrue(!runnable.isEmpty(), "no native attention image for this CPU");
        return runnable.stream().map(v -> {
            try {
                NativeAttention k = NativeAttention.load(v);
                assertThat(k.variant).isEqualTo(v);
                return k;
            } catch (Throwable t) {
                throw new AssertionError("loading the " + v + " image", t);
            }
        }).toList();
    }

    private static MemorySegment seg(float[] a) {
        return MemorySegment.ofArray(a);
    }

    /** Floats of mixed magnitudes (2^-20 to 2^5), some zero. */
    private static float[] randomFloats(SplittableRandom rnd, int n) {
        float[] a = new float[n];
        for (int i = 0; i < n; i++) a[i] = rnd.nextInt(40) == 0 ? 0f : (float) (rnd.nextGaussian() * Math.pow(2, rnd.nextInt(-20, 6)));
        return a;
    }

    private static int[] bits(float[] a) {
        int[] b = new int[a.length];
        for (int i = 0; i < a.length; i++) b[i] = Float.floatToRawIntBits(a[i]);
        return b;
    }
}
