package dgr.engine.sampler;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class GreedySamplerTest {
    /** Values that make ties, signed zeros, infinities and NaNs likely among a few random ones. */
    private static float value(SplittableRandom r) {
        return switch (r.nextInt(12)) {
            case 0 -> 0f;
            case 1 -> -0f;
            case 2 -> Float.NaN;
            case 3 -> Float.POSITIVE_INFINITY;
            case 4 -> Float.NEGATIVE_INFINITY;
            case 5, 6 -> r.nextInt(3);  // small integers: many ties
            default -> (float) r.nextGaussian();
        };
    }

    @Test
    void vectorArgmaxPicksTheScalarPassIndexOnEveryRow() {
        SplittableRandom r = new SplittableRandom(23);
        for (int round = 0; round < 20_000; round++) {
            int width = 1 + r.nextInt(70), offset = r.nextInt(9);
            float[] logits = new float[offset + width + r.nextInt(9)];
            boolean nan = r.nextInt(4) == 0, special = r.nextBoolean();
            for (int i = 0; i < logits.length; i++) {
                float v = special ? value(r) : (float) r.nextGaussian();
                logits[i] = !nan && Float.isNaN(v) ? 1f : v;
            }
            assertThat(GreedySampler.argmax(logits, offset, width))
                    .as("round %d, width %d, offset %d", round, width, offset)
                    .isEqualTo(GreedySampler.scalarArgmax(logits, offset, width));
        }
    }

    @Test
    void aVocabularyRowGivesTheFirstOfItsLargestLogits() {
        float[] logits = new float[3 + 128_256];
        SplittableRandom r = new SplittableRandom(5);
        for (int i = 0; i < logits.length; i++) logits[i] = (float) r.nextGaussian();
        logits[3 + 90_001] = 9f;
        logits[3 + 100_000] = 9f;
        logits[1] = 20f;  // before the row: not part of it
        assertThat(GreedySampler.argmax(logits, 3, 128_256)).isEqualTo(90_001);
        logits[3 + 128_255] = 9.5f;  // the last logit
        assertThat(GreedySampler.argmax(logits, 3, 128_256)).isEqualTo(128_255);
    }
}
