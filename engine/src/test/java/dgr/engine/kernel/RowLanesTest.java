package dgr.engine.kernel;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * With the rows of a prompt run in vector lanes ({@link RowLanes}), every score, weight, running
 * maximum and sum, rescale factor and output has the bits of the one-row kernels: a score one FMA
 * chain over the dimensions then times the scale, a tile's softmax step {@link OnlineSoftmax#tile}'s,
 * an output one FMA chain over the positions.
 */
class RowLanesTest {
    private static final int R = RowLanes.LANES, TILE = 64;

    @Test
    void scoresEqualOneFmaChainPerRowHeadAndPositionTimesTheScale() {
        SplittableRandom rnd = new SplittableRandom(7);
        for (int hd : new int[] {16, 64}) {
            for (int heads = 1; heads <= 6; heads++) {
                for (int[] span : new int[][] {{0, 64}, {8, 24}, {56, 64}}) {
                    int rows = 13, qd = heads * hd + 5, kvd = hd * 2;
                    float[] q = random(rnd, rows * qd), k = random(rnd, TILE * kvd + hd), qT = new float[heads * hd * R];
                    int sb = 4;
                    float[] sT = new float[sb + heads * TILE * R];
                    float scale = 0.125f;
                    RowLanes.transpose(q, qd, 0, rows, 5, heads * hd, qT, 0);
                    RowLanes.scores(qT, 0, heads, hd, k, hd, 8 * kvd, span[0], span[1], scale, sT, sb, TILE);
                    for (int r = 0; r < rows; r++) {
                        for (int g = 0; g < heads; g++) {
                            for (int p = span[0]; p < span[1]; p++) {
                                float s = 0f;
                                for (int d = 0; d < hd; d++) s = Math.fma(q[r * qd + 5 + g * hd + d], k[hd + p / 8 * 8 * kvd + 8 * d + p % 8], s);
                                assertThat(bits(sT[sb + (g * TILE + p) * R + r])).as("hd %d heads %d row %d head %d position %d", hd, heads, r, g, p)
                                        .isEqualTo(bits(s * scale));
                            }
                        }
                    }
                }
            }
        }
    }

    @Test
    void softmaxStepsOverTwoTilesEqualTheOneRowTileForEveryLane() {
        SplittableRandom rnd = new SplittableRandom(8);
        for (int round = 0; round < 20; round++) {
            float[] state = new float[2 * R], alpha = new float[R], sums = new float[9 * R], lo = new float[R], hi = new float[R];
            java.util.Arrays.fill(state, 0, R, Float.NEGATIVE_INFINITY);
            float[][] oneState = new float[R][2];
            for (float[] s : oneState) s[0] = Float.NEGATIVE_INFINITY;
            for (int tile = 0; tile < 2; tile++) {
                float[] sT = new float[TILE * R];
                int pLo = TILE, pHi = 0;
                boolean masked = false;
                for (int r = 0; r < R; r++) {
                    int l = rnd.nextInt(TILE + 1), h = rnd.nextInt(TILE + 1);
                    if (rnd.nextInt(3) == 0) { l = 0; h = TILE; }
                    if (l >= h) { l = TILE; h = 0; } else { pLo = Math.min(pLo, l); pHi = Math.max(pHi, h); masked |= l > 0 || h < TILE; }
                    lo[r] = l;
                    hi[r] = h;
                }
                if (pLo >= pHi) continue;
                pLo &= ~7;
                pHi = (pHi + 7) & ~7;
                for (int i = 0; i < sT.length; i++) sT[i] = (float) (rnd.nextGaussian() * 8);
                float[] before = sT.clone();
                RowLanes.softmax(sT, 0, pLo, pHi, masked, lo, hi, state, 0, alpha, 0, sums);
                for (int r = 0; r < R; r++) {
                    int l = (int) lo[r], h = (int) hi[r];
                    if (l >= h) {
                        assertThat(alpha[r]).as("round %d tile %d lane %d sees none", round, tile, r).isIn(1f, 0f);
                        continue;
                    }
                    // The one-row tile: raw scores (here already scaled, so scale 1), its running state.
                    float[] sc = new float[TILE], acc = new float[8];
                    for (int p = 0; p < TILE; p++) sc[p] = before[p * R + r];
                    float mOld = oneState[r][0];
                    OnlineSoftmax.tile(sc, 0, 0, l, h, 1f, 0f, null, oneState[r], 0, acc, 0, 8);
                    String what = "round " + round + " tile " + tile + " lane " + r;
                    assertThat(bits(state[r])).as(what + " maximum").isEqualTo(bits(oneState[r][0]));
                    assertThat(bits(state[R + r])).as(what + " sum").isEqualTo(bits(oneState[r][1]));
                    float a = mOld == Float.NEGATIVE_INFINITY ? 0f : Exp.exp(mOld - oneState[r][0]);
                    assertThat(bits(alpha[r])).as(what + " rescale").isEqualTo(bits(a));
                    for (int p = l; p < h; p++) assertThat(bits(sT[p * R + r])).as(what + " weight " + p).isEqualTo(bits(sc[p]));
                }
            }
        }
    }

    @Test
    void weightedValuesOfAllLanesEqualTheRescaleThenOneFmaChainPerOutputInPositionOrder() {
        SplittableRandom rnd = new SplittableRandom(9);
        for (int hd : new int[] {8, 64, 80}) {
            for (int heads = 1; heads <= 5; heads++) {
                int kvd = hd * 2, p0 = 3, p1 = 50, ob = 7, sb = 5;
                float[] sT = random(rnd, sb + heads * TILE * R), v = random(rnd, TILE * kvd), alpha = random(rnd, heads * R);
                alpha[0] = 1f;
                alpha[R - 1] = 0f;
                float[] outT = random(rnd, ob + heads * hd * R), expect = outT.clone();
                RowLanes.weightedVT(sT, sb, TILE, heads, p0, p1, v, 3 * kvd + hd, kvd, outT, ob, hd, alpha);
                for (int r = 0; r < R; r++) {
                    for (int g = 0; g < heads; g++) {
                        for (int i = 0; i < hd; i++) {
                            float a = expect[ob + (g * hd + i) * R + r] * alpha[g * R + r];
                            for (int p = p0; p < p1; p++) a = Math.fma(v[3 * kvd + hd + (p - p0) * kvd + i], sT[sb + (g * TILE + p) * R + r], a);
                            assertThat(bits(outT[ob + (g * hd + i) * R + r])).as("hd %d heads %d row %d head %d value %d", hd, heads, r, g, i)
                                    .isEqualTo(bits(a));
                        }
                    }
                }
            }
        }
    }

    private static int bits(float f) {
        return Float.floatToRawIntBits(f);
    }

    private static float[] random(SplittableRandom rnd, int n) {
        float[] a = new float[n];
        for (int i = 0; i < n; i++) a[i] = (float) rnd.nextDouble(-1, 1);
        return a;
    }
}
