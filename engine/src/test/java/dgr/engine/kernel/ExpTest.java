package dgr.engine.kernel;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The softmax exponential: lanes and ranges equal the scalar form to the bit, within 2e-7 of e^x, never subnormal. */
class ExpTest {
    @Test
    void vectorLanesEqualTheScalarFormAndStayWithinTwoTenthsOfAMillionth() {
        SplittableRandom rnd = new SplittableRandom(3);
        float[] x = new float[8], y = new float[8];
        double worst = 0;
        for (int rep = 0; rep < 200_000; rep++) {
            for (int i = 0; i < 8; i++) x[i] = rep % 7 == 0 ? (float) -rnd.nextDouble(0.001) : (float) -rnd.nextDouble(90);
            System.arraycopy(x, 0, y, 0, 8);
            Exp.lanes8(y, 0, 8, 0f);
            for (int i = 0; i < 8; i++) {
                assertThat(Float.floatToRawIntBits(y[i])).as("e^%s", x[i]).isEqualTo(Float.floatToRawIntBits(Exp.exp(x[i])));
                if (x[i] < Exp.FLOOR) {
                    assertThat(y[i]).isZero();
                } else {
                    assertThat(y[i]).isGreaterThanOrEqualTo(Float.MIN_NORMAL);
                    worst = Math.max(worst, Math.abs(y[i] / Math.exp(x[i]) - 1));
                }
            }
        }
        assertThat(worst).isLessThan(2e-7);
    }

    @Test
    void aRangeGetsTheScalarFormOfEachValueLessTheSubtrahend() {
        SplittableRandom rnd = new SplittableRandom(5);
        for (int n = 0; n <= 72; n += 8) {
            float[] a = new float[n + 5], before = new float[n + 5];
            for (int i = 0; i < a.length; i++) a[i] = before[i] = (float) rnd.nextDouble(-95, 3);
            float sub = (float) rnd.nextDouble(0, 3);
            Exp.exp(a, 3, 3 + n, sub);
            for (int i = 0; i < a.length; i++) {
                float want = i >= 3 && i < 3 + n ? Exp.exp(before[i] - sub) : before[i];
                assertThat(Float.floatToRawIntBits(a[i])).as("n=%d i=%d", n, i).isEqualTo(Float.floatToRawIntBits(want));
            }
        }
    }

    @Test
    void edgeInputsGiveOneZeroAndNaN() {
        assertThat(Exp.exp(0f)).isEqualTo(1f);
        assertThat(Exp.exp(-0f)).isEqualTo(1f);
        assertThat(Exp.exp(Float.NEGATIVE_INFINITY)).isZero();
        assertThat(Exp.exp(Float.NaN)).isNaN();
        float[] y = {0f, -0f, Float.NEGATIVE_INFINITY, Float.NaN, -87f, -87.01f, -1f, -2f};
        Exp.exp(y, 0, 8, 0f);
        assertThat(y[0]).isEqualTo(1f);
        assertThat(y[1]).isEqualTo(1f);
        assertThat(y[2]).isZero();
        assertThat(y[3]).isNaN();
        assertThat(y[4]).isEqualTo(Exp.exp(-87f)).isGreaterThanOrEqualTo(Float.MIN_NORMAL);
        assertThat(y[5]).isZero();
    }
}
