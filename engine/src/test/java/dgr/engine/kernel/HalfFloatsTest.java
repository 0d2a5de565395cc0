package dgr.engine.kernel;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Both f16 widenings (the CPU's conversion, and the lanes q8_0's scales use) are exact on every input. */
class HalfFloatsTest {
    @Test
    void f16WideningMatchesFloat16ToFloatOnEveryBitPattern() {
        short[] all = new short[65536];
        for (int i = 0; i < all.length; i++) all[i] = (short) i;
        float[] byLanes = new float[all.length], byLoop = new float[all.length];
        HalfFloats.f16ToFloatsByLanes(all, 0, byLanes, 0, all.length);
        HalfFloats.f16ToFloats(all, 0, byLoop, 0, all.length);
        for (int i = 0; i < all.length; i++) {
            float want = Float.float16ToFloat(all[i]);
            for (float got : new float[] {byLanes[i], byLoop[i]}) {
                if (Float.isNaN(want)) assertThat(got).as("0x%04x", i).isNaN();
                else assertThat(Float.floatToRawIntBits(got)).as("0x%04x", i).isEqualTo(Float.floatToRawIntBits(want));
            }
        }
    }
}
