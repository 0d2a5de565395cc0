package dgr.engine.llama;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Attention weights are normalized without ever leaving a subnormal float for the value FMAs. */
class AttentionWeightsTest {

    @Test
    void weightsBelowTheSmallestNormalFloatBecomeZeroAndTheRestAreDivided() {
        float big = 1f, tiny = (float) Math.exp(-100); // a score 100 under the maximum: subnormal
        assertThat(tiny).isPositive().isLessThan(Float.MIN_NORMAL);
        float[] sc = {9f, big, tiny, 0.5f, Float.MIN_NORMAL * 2, 9f};
        Attention.normalize(sc, 1, 5, 2f);
        assertThat(sc).containsExactly(9f, 0.5f, 0f, 0.25f, Float.MIN_NORMAL, 9f);
        float[] under = {Float.MIN_NORMAL};
        Attention.normalize(under, 0, 1, 3f); // the quotient underflows into the subnormals
        assertThat(under[0]).isZero();
    }
}
