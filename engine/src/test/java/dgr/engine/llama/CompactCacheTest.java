package dgr.engine.llama;

import static org.assertj.core.api.Assertions.assertThat;

import dgr.engine.Engine;
import dgr.engine.EngineOptions;
import dgr.engine.ForwardResult;
import dgr.engine.KvCacheTypes;
import dgr.engine.StateSlot;
import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A compact K/V cache changes the logits by its rounding only: over a 200-token prompt (four
 * attention tiles) the logits of llama-tiny Q8_0 stay within a bound of the f32 cache's that
 * follows each type's precision (f16 11 bits, bf16 8, q8_0 about 7 per block), and are not
 * identical (the cache really holds the rounded values).
 */
class CompactCacheTest {
    @ParameterizedTest(name = "{0}")
    @CsvSource({"f16, 0.002", "bf16, 0.02", "q8_0, 0.02", "q8_0/f16, 0.02"})
    void logitsStayWithinTheCacheTypesRoundingOfTheF32Caches(String cache, double bound) {
        int[] prompt = new int[200];
        SplittableRandom rnd = new SplittableRandom(17);
        for (int i = 0; i < prompt.length; i++) prompt[i] = rnd.nextInt(1025);
        float[] f32 = lastLogits(KvCacheTypes.F32, prompt), compact = lastLogits(TinyModels.cache(cache), prompt);
        double maxDiff = 0, maxAbs = 0;
        for (int i = 0; i < f32.length; i++) {
            maxDiff = Math.max(maxDiff, Math.abs(f32[i] - compact[i]));
            maxAbs = Math.max(maxAbs, Math.abs(f32[i]));
        }
        assertThat(maxDiff).as(cache).isGreaterThan(0).isLessThan(bound * maxAbs);
    }

    private static float[] lastLogits(KvCacheTypes cache, int[] prompt) {
        try (Engine e = TinyModels.load("Q8_0", EngineOptions.Kind.SIMD, 1, 256, cache); StateSlot slot = e.openSlot()) {
            ForwardResult r = TinyModels.prefill(e, slot, prompt);
            return r.copyOutput(prompt.length - 1);
        }
    }
}
