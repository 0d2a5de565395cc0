package dgr.gguf.codec;

import static org.assertj.core.api.Assertions.assertThat;

import dgr.gguf.GgmlType;
import java.lang.foreign.MemorySegment;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * TQ1_0 and TQ2_0 (checked whole-model against llama.cpp: llama-tiny in either type gives its 16
 * greedy tokens; see docs/engine.md): every value decodes to {@code (round(x/amax))·d}, and the
 * two packings of the same input decode to the same numbers.
 */
class TernaryCodecTest {

    private static float[] decode(GgmlType t, float[] x) {
        BlockCodec c = Codecs.of(t);
        MemorySegment m = MemorySegment.ofArray(new byte[(int) t.bytesFor(x.length)]);
        c.quantize(x, 0, x.length, m, 0);
        float[] y = new float[x.length];
        c.dequantize(m, 0, y, 0, y.length);
        return y;
    }

    @ParameterizedTest
    @EnumSource(value = GgmlType.class, names = {"TQ1_0", "TQ2_0"})
    void everyValueIsItsTritTimesTheBlockScale(GgmlType t) {
        SplittableRandom rnd = new SplittableRandom(3);
        float[] x = new float[512];
        for (int i = 0; i < x.length; i++) x[i] = (float) rnd.nextGaussian();
        x[7] = 0f;
        x[300] = -5f; // the second block's largest magnitude, negative
        float[] y = decode(t, x);
        for (int b = 0; b < 2; b++) {
            float amax = 0;
            for (int i = 0; i < 256; i++) amax = Math.max(amax, Math.abs(x[256 * b + i]));
            float d = Float.float16ToFloat(Float.floatToFloat16(amax));
            for (int i = 0; i < 256; i++) {
                int j = 256 * b + i;
                int trit = CRound.roundf(x[j] * (1f / amax));
                assertThat(y[j]).as("%s value %d", t, j).isEqualTo(trit * d);
            }
        }
        assertThat(y[300]).isEqualTo(-Float.float16ToFloat(Float.floatToFloat16(5f)));
        assertThat(y[7]).isZero();
    }

    @Test
    void bothPackingsDecodeTheSameNumbers() {
        SplittableRandom rnd = new SplittableRandom(4);
        float[] x = new float[256 * 3];
        for (int i = 0; i < x.length; i++) x[i] = (float) rnd.nextGaussian() * (i % 7 == 0 ? 0.01f : 1f);
        assertThat(decode(GgmlType.TQ1_0, x)).containsExactly(decode(GgmlType.TQ2_0, x));
    }

    @Test
    void anAllZeroBlockDecodesToZeros() {
        for (GgmlType t : new GgmlType[] {GgmlType.TQ1_0, GgmlType.TQ2_0}) {
            assertThat(decode(t, new float[256])).containsOnly(0f);
        }
    }
}
