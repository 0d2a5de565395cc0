package dgr.engine.kernel;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Prepared activations are the input times its chunk's power of two, and never subnormal. */
class SpanInputTest {

    @Test
    void scaledActivationsBelowTheSmallestNormalFloatBecomeZero() {
        float[] scale = {1f, 0x1p-4f, 0x1p-8f, 0x1p-12f};
        float[] x = new float[64];
        for (int i = 0; i < x.length; i++) x[i] = 1.5f + i;
        x[3] = 0x1p-120f; // chunk 0, scale 1: stays (normal)
        x[24 + 5] = 0x1p-120f; // chunk 3, scale 2^-12: 2^-132 would be subnormal
        x[24 + 6] = -0x1p-114f; // chunk 3: -2^-126, the smallest normal: stays
        x[8] = 0x1p-140f; // subnormal input, scale 2^-4: still subnormal
        SpanInput in = new SpanInput().prepare(x, 1, 64, 1, scale, 32, new float[8]);
        float[] s = in.scaled;
        int p = SpanInput.PAD;
        assertThat(s[p + 3]).isEqualTo(0x1p-120f);
        assertThat(s[p + 24 + 5]).isZero();
        assertThat(s[p + 24 + 6]).isEqualTo(-Float.MIN_NORMAL);
        assertThat(s[p + 8]).isZero();
        for (int i = 0; i < 64; i++) {
            if (i == 3 || i == 29 || i == 30 || i == 8) continue;
            assertThat(s[p + i]).as("element %d", i).isEqualTo(x[i] * scale[(i / 8) % 4]);
        }
    }
}
