package dgr.engine.kernel;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The attention kernels that run many chains side by side (and 16 lanes where the CPU has 512-bit
 * vectors) give every score, weight and output the bits of the one sequence {@link Kernels}
 * states: FMAs in order per element, the softmax sum in 8-lane blocks in order then a fixed tree.
 */
class SimdAttentionTest {
    private static final SimdKernels K = new SimdKernels();

    @Test
    void scoresOverManyBlocksEqualOneFmaChainPerPositionInDimensionOrder() {
        SplittableRandom rnd = new SplittableRandom(5);
        for (int hd : new int[] {8, 64, 72, 128}) {
            for (int heads = 1; heads <= 6; heads++) {
                for (int blocks = 1; blocks <= 8; blocks++) {
                    int kvd = hd * 3, stride = 72;
                    float[] q = random(rnd, 7 + heads * hd), k = random(rnd, 8 * kvd * 8 + 8 * hd + 5);
                    int qo = 7, kBase = 8 * hd + 5, so = 3;
                    float[] sc = new float[so + heads * stride + 64];
                    K.scores(q, qo, heads, hd, k, kBase, 8 * kvd, blocks, sc, so, stride);
                    for (int g = 0; g < heads; g++) {
                        for (int t = 0; t < 8 * blocks; t++) {
                            float s = 0f;
                            for (int d = 0; d < hd; d++) s = Math.fma(q[qo + g * hd + d], k[kBase + t / 8 * 8 * kvd + 8 * d + t % 8], s);
                            assertThat(Float.floatToRawIntBits(sc[so + g * stride + t]))
                                    .as("hd %d heads %d blocks %d head %d position %d", hd, heads, blocks, g, t)
                                    .isEqualTo(Float.floatToRawIntBits(s));
                        }
                    }
                }
            }
        }
    }

    @Test
    void weightedValuesEqualOneFmaChainPerOutputInPositionOrder() {
        SplittableRandom rnd = new SplittableRandom(6);
        for (int hd : new int[] {8, 24, 64, 80, 128, 136}) {
            for (int heads = 1; heads <= 6; heads++) {
                for (int[] range : new int[][] {{0, 64}, {5, 6}, {3, 41}, {60, 64}}) {
                    int t0 = range[0], t1 = range[1], kvd = hd * 2 + 8, wStride = 70;
                    float[] w = random(rnd, 3 + heads * wStride), v = random(rnd, 11 + 64 * kvd);
                    float[] out = random(rnd, 5 + heads * hd), expect = out.clone();
                    K.weightedV(w, 3, wStride, heads, t0, t1, v, 11, kvd, out, 5, hd);
                    for (int g = 0; g < heads; g++) {
                        for (int i = 0; i < hd; i++) {
                            float a = expect[5 + g * hd + i];
                            for (int t = t0; t < t1; t++) a = Math.fma(v[11 + (t - t0) * kvd + i], w[3 + g * wStride + t], a);
                            assertThat(Float.floatToRawIntBits(out[5 + g * hd + i]))
                                    .as("hd %d heads %d [%d, %d) head %d value %d", hd, heads, t0, t1, g, i)
                                    .isEqualTo(Float.floatToRawIntBits(a));
                        }
                    }
                }
            }
        }
    }

    @Test
    void softmaxTileEqualsPositionByPositionWeightsAndAnEightLaneSumInBlockOrder() {
        SplittableRandom rnd = new SplittableRandom(7);
        int hd = 64, ta = 128;
        for (int[] range : new int[][] {{128, 192}, {130, 131}, {133, 180}, {128, 144}, {129, 160}, {150, 192}, {136, 152}}) {
            int lo = range[0], hi = range[1];
            float[] sc = new float[64 + 8], acc = random(rnd, hd), state = {0.75f, 3.5f};
            for (int j = 0; j < 64; j++) sc[j] = (float) rnd.nextDouble(-40, 40);
            float[] ref = sc.clone(), refAcc = acc.clone();
            float scale = 0.125f;
            OnlineSoftmax.tile(sc, 0, ta, lo, hi, scale, 0f, (s, c) -> s, state, 0, acc, 0, hd);

            int j0 = (lo - ta) & ~7, jEnd = (hi - ta + 7) & ~7;
            float m = 0.75f;
            for (int j = j0; j < jEnd; j++) {
                int t = ta + j;
                ref[j] = t >= lo && t < hi ? ref[j] * scale : Float.NEGATIVE_INFINITY;
                m = Math.max(m, ref[j]);
            }
            float[] lanes = new float[8];
            for (int j = j0; j < jEnd; j++) {
                ref[j] = Exp.exp(ref[j] - m);
                lanes[j % 8] += ref[j];
            }
            float alpha = Exp.exp(0.75f - m);
            float sum = 3.5f * alpha + (((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7])));
            assertThat(state[0]).isEqualTo(m);
            assertThat(Float.floatToRawIntBits(state[1])).as("sum over [%d, %d)", lo, hi).isEqualTo(Float.floatToRawIntBits(sum));
            for (int j = j0; j < jEnd; j++) {
                assertThat(Float.floatToRawIntBits(sc[j])).as("weight %d of [%d, %d)", j, lo, hi).isEqualTo(Float.floatToRawIntBits(ref[j]));
            }
            for (int c = 0; c < hd; c++) {
                float expect = alpha == 1f ? refAcc[c] : refAcc[c] * alpha;
                assertThat(acc[c]).isEqualTo(expect);
            }
        }
    }

    @Test
    void sixteenLaneExponentialEqualsTheScalarFormToTheBit() {
        SplittableRandom rnd = new SplittableRandom(8);
        float[] x = new float[16], y = new float[16];
        for (int rep = 0; rep < 20_000; rep++) {
            for (int i = 0; i < 16; i++) x[i] = rep % 5 == 0 ? (float) -rnd.nextDouble(100) : (float) -rnd.nextDouble(0.01);
            if (rep == 0) {
                x[0] = Float.NEGATIVE_INFINITY;
                x[1] = Float.NaN;
                x[2] = -0f;
                x[3] = Exp.FLOOR;
            }
            System.arraycopy(x, 0, y, 0, 16);
            Exp.lanes16(y, 0, 16, 0f);
            for (int i = 0; i < 16; i++) {
                assertThat(Float.floatToRawIntBits(y[i])).as("e^%s", x[i]).isEqualTo(Float.floatToRawIntBits(Exp.exp(x[i])));
            }
        }
    }

    private static float[] random(SplittableRandom rnd, int n) {
        float[] x = new float[n];
        for (int i = 0; i < n; i++) x[i] = (float) rnd.nextDouble(-1, 1);
        return x;
    }
}
