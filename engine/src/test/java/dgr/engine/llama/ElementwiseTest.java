package dgr.engine.llama;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class ElementwiseTest {
    /** Gates across SiLU's range, with the values whose handling differs: zeros, NaN, infinities, past exp's floor. */
    private static float[] gates(int n) {
        SplittableRandom r = new SplittableRandom(26);
        float[] g = new float[n];
        float[] special = {0f, -0f, Float.NaN, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY, -90f, 90f, -87f, 1e-30f, -1e-30f};
        for (int i = 0; i < n; i++) g[i] = i < special.length ? special[i] : (float) (r.nextGaussian() * (i % 3 == 0 ? 20 : 3));
        return g;
    }

    @Test
    void swigluLanesGiveTheScalarSiluBitsForEveryRowRangeAndTail() {
        int n = 3, rows = 83; // ranges whose lengths are not multiples of eight leave a scalar tail
        float[] gate = gates(n * rows), up = new float[n * rows], hb = new float[n * rows];
        SplittableRandom r = new SplittableRandom(7);
        for (int i = 0; i < up.length; i++) up[i] = (float) r.nextGaussian();
        Elementwise.swiglu(false, gate, up, hb, n, rows, 0, 37);
        Elementwise.swiglu(false, gate, up, hb, n, rows, 37, rows);
        for (int i = 0; i < hb.length; i++) {
            assertThat(Float.floatToIntBits(hb[i])).as("element %d, gate %s", i, gate[i])
                    .isEqualTo(Float.floatToIntBits(Elementwise.silu(gate[i]) * up[i]));
        }
    }

    @Test
    void siluStaysWithinAFewUlpsOfTheExactValue() {
        for (float x : gates(4000)) {
            if (!Float.isFinite(x) || x < -80f) continue;
            double exact = x / (1.0 + Math.exp(-(double) x));
            assertThat((double) Elementwise.silu(x)).as("silu(%s)", x)
                    .isCloseTo(exact, org.assertj.core.data.Offset.offset(Math.abs(exact) * 1e-6 + 1e-37));
        }
        assertThat(Elementwise.silu(Float.NaN)).isNaN();
        assertThat(Elementwise.silu(Float.POSITIVE_INFINITY)).isEqualTo(Float.POSITIVE_INFINITY);
    }
}
