package dgr.engine.kernel;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The native half-float attention against the order of operations it promises (each score a chain of
 * fused multiply-adds over the head's elements from +0, each output a chain over positions from its
 * value), on pages of random f16 and bf16 values including subnormals: bit for bit, for every remainder
 * of blocks, query heads, elements and positions the kernel's loops have, at offsets inside the arrays.
 * {@code SimdAttentionTest} checks the Java kernels against the same chains, so the two paths agree.
 * Every image the CPU runs is checked, whichever the engine took; skipped where none runs, saying why.
 */
class NativeAttentionTest {
    private static final int TILE = 64;

    @ParameterizedTest(name = "{0} heads {1} hd {2} nh {3}")
    @CsvSource({"false, 4, 64, 4", "true, 4, 64, 2", "false, 1, 64, 1", "false, 5, 16, 3", "true, 8, 128, 1", "false, 2, 80, 2",
            "false, 7, 32, 4"})
    void scoresAreTheFmaChainOfEachPositionOverItsElements(boolean bf16, int heads, int hd, int nh) {
        for (NativeAttention kernel : kernels()) scores(kernel, bf16, heads, hd, nh);
    }

    private static void scores(NativeAttention kernel, boolean bf16, int heads, int hd, int nh) {
        SplittableRandom rnd = new SplittableRandom(heads * 131L + hd + nh);
        int kvHeads = nh + 1, hs = heads * TILE;
        NativeAttention.Shape shape = new NativeAttention.Shape(heads, hd, TILE, hs);
        short[] page = randomPage(rnd, kvHeads * TILE * hd, bf16);
        float[] q = randomFloats(rnd, 3 + kvHeads * heads * hd);
        for (int first = 0; first < 8; first++) {
            for (int blocks = 1; blocks <= 8 - first; blocks++) {
                int kh0 = kvHeads - nh, kOff = (kh0 * TILE + 8 * first) * hd, qOff = 3 + kh0 * heads * hd, scOff = 5 + 8 * first;
                float[] sc = new float[5 + nh * hs + 16], want = sc.clone();
                Arrays.fill(sc, Float.NaN);
                Arrays.fill(want, Float.NaN);
                kernel.scores(shape, bf16, seg(page), kOff, seg(q), qOff, seg(sc), scOff, nh, blocks, seg(page), 0, 4);
                for (int h = 0; h < nh; h++) {
                    for (int g = 0; g < heads; g++) {
                        for (int j = 0; j < 8 * blocks; j++) {
                            float acc = 0f;
                            for (int d = 0; d < hd; d++) {
                                float k = widen(page[kOff + h * TILE * hd + (j / 8) * 8 * hd + 8 * d + j % 8], bf16);
                                acc = Math.fma(k, q[qOff + (h * heads + g) * hd + d], acc);
                            }
                            want[scOff + h * hs + g * TILE + j] = acc;
                        }
                    }
                }
                assertThat(bits(sc)).as("%s, first block %d, %d blocks", kernel.variant, first, blocks).isEqualTo(bits(want));
            }
        }
    }

    @ParameterizedTest(name = "{0} heads {1} hd {2} nh {3}")
    @CsvSource({"false, 4, 64, 4", "true, 4, 64, 2", "false, 1, 64, 1", "false, 5, 16, 3", "true, 8, 128, 1", "false, 2, 80, 2"})
    void outputsAreTheFmaChainOfEachElementOverThePositions(boolean bf16, int heads, int hd, int nh) {
        for (NativeAttention kernel : kernels()) weighted(kernel, bf16, heads, hd, nh);
    }

    private static void weighted(NativeAttention kernel, boolean bf16, int heads, int hd, int nh) {
        SplittableRandom rnd = new SplittableRandom(heads * 977L + hd + nh);
        int kvHeads = nh + 1, hs = heads * TILE;
        NativeAttention.Shape shape = new NativeAttention.Shape(heads, hd, TILE, hs);
        short[] page = randomPage(rnd, kvHeads * TILE * hd, bf16);
        float[] w = randomFloats(rnd, 7 + nh * hs);
        for (int lo : new int[] {0, 1, 9, 63}) {
            for (int n = 1; lo + n <= TILE; n += 1 + n / 3) {
                int kh0 = kvHeads - nh, vOff = (kh0 * TILE + lo) * hd, wOff = 7 + lo, outOff = 2 + kh0 * heads * hd;
                float[] out = randomFloats(rnd, outOff + nh * heads * hd + 3), want = out.clone();
                kernel.weighted(shape, bf16, seg(page), vOff, seg(w), wOff, seg(out), outOff, nh, n, null, 0, 0);
                for (int h = 0; h < nh; h++) {
                    for (int g = 0; g < heads; g++) {
                        for (int c = 0; c < hd; c++) {
                            int o = outOff + (h * heads + g) * hd + c;
                            float acc = want[o];
                            for (int t = 0; t < n; t++) {
                                acc = Math.fma(widen(page[vOff + h * TILE * hd + t * hd + c], bf16), w[wOff + h * hs + g * TILE + t], acc);
                            }
                            want[o] = acc;
                        }
                    }
                }
                assertThat(bits(out)).as("%s, from %d, %d positions", kernel.variant, lo, n).isEqualTo(bits(want));
            }
        }
    }

    /** Every image this CPU runs (AVX-512 and AVX2 here both), loaded apart from the one the engine took. */
    private static List<NativeAttention> kernels() {
        assumeTrue(CodePage.unavailable() == null, CodePage.unavailable());
        List<NativeAttention> all = new ArrayList<>();
        try {
            for (NativeAttention.Variant v : NativeAttention.runnable()) all.add(NativeAttention.load(v));
        } catch (Throwable t) {
            throw new AssertionError("loading an image this CPU has the flags for", t);
        }
        assumeTrue(!all.isEmpty(), "no image for this CPU");
        return all;
    }

    private static MemorySegment seg(short[] a) {
        return MemorySegment.ofArray(a);
    }

    private static MemorySegment seg(float[] a) {
        return MemorySegment.ofArray(a);
    }

    private static float widen(short h, boolean bf16) {
        return bf16 ? Float.intBitsToFloat(h << 16) : Float.float16ToFloat(h);
    }

    /** Half floats as a cache holds them: rounded from floats of mixed magnitudes, some subnormal or zero. */
    private static short[] randomPage(SplittableRandom rnd, int n, boolean bf16) {
        short[] p = new short[n];
        for (int i = 0; i < n; i++) {
            float f = (float) (rnd.nextGaussian() * Math.pow(2, rnd.nextInt(-20, 6)));
            if (rnd.nextInt(50) == 0) f = rnd.nextBoolean() ? 0f : -0f;
            p[i] = bf16 ? HalfFloats.bf16(f) : Float.floatToFloat16(f);
        }
        return p;
    }

    private static float[] randomFloats(SplittableRandom rnd, int n) {
        float[] a = new float[n];
        for (int i = 0; i < n; i++) a[i] = (float) rnd.nextGaussian();
        return a;
    }

    private static int[] bits(float[] a) {
        int[] b = new int[a.length];
        for (int i = 0; i < a.length; i++) b[i] = Float.floatToRawIntBits(a[i]);
        return b;
    }
}
