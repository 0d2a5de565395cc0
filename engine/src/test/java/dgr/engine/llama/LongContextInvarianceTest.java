package dgr.engine.llama;

import static org.assertj.core.api.Assertions.assertThat;

import dgr.engine.Engine;
import dgr.engine.EngineOptions;
import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Batch invariance past one attention tile ({@link TiledAttention}: 64 key positions, runs of 16
 * query rows): prompts of 150 to 263 tokens, each alone in one forward, then all together chunked
 * at 1, 13 and 100 rows on 2 threads, give the same bits as alone on 1 thread. Covers the global layers, sliding
 * windows (gemma3: window layers crossing tiles), chunked attention (llama4) and sink logits (gpt-oss),
 * with f32 K/V and with each compact cache type (f16, bf16, q8_0, and K and V of different types).
 */
class LongContextInvarianceTest {
    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({"Q4_0, SIMD, f32", "Q4_K_M, Q8, f32", "gemma3-Q8_0, SIMD, f32", "gpt-oss-Q8_0, SIMD, f32", "llama4-Q8_0, SCALAR, f32",
            // Compact K/V cache types: tiles widened per run, windows and sinks across them.
            "Q4_0, Q8, f16", "gemma3-Q8_0, SIMD, q8_0", "gpt-oss-Q8_0, Q8, q8_0/bf16"})
    void longPromptsGiveTheSameBitsAloneChunkedAndThreaded(String type, EngineOptions.Kind kind, String cache) {
        SplittableRandom rnd = new SplittableRandom(11);
        int[] lengths = {150, 263, 197};
        int[][] prompts = new int[lengths.length][];
        for (int s = 0; s < lengths.length; s++) {
            prompts[s] = new int[lengths[s]];
            for (int i = 0; i < lengths[s]; i++) prompts[s][i] = rnd.nextInt(1025);
        }
        BatchInvarianceTest.Trace[] alone = new BatchInvarianceTest.Trace[lengths.length];
        try (Engine e = TinyModels.load(type, kind, 1, 512, TinyModels.cache(cache))) {
            for (int s = 0; s < lengths.length; s++) {
                alone[s] = BatchInvarianceTest.run(e, new int[][] {prompts[s]}, Integer.MAX_VALUE)[0];
            }
        }
        for (int threads : new int[] {2}) {
            try (Engine e = TinyModels.load(type, kind, threads, 512, TinyModels.cache(cache))) {
                for (int chunk : new int[] {1, 13, 100}) {
                    BatchInvarianceTest.Trace[] together = BatchInvarianceTest.run(e, prompts, chunk);
                    for (int s = 0; s < lengths.length; s++) {
                        String what = type + " " + kind + " " + cache + " session " + s + " chunk " + chunk + " threads " + threads;
                        assertThat(together[s].tokens()).as(what).isEqualTo(alone[s].tokens());
                        for (int i = 0; i < alone[s].logits().size(); i++) {
                            assertThat(BatchInvarianceTest.bits(together[s].logits().get(i))).as(what + " output " + i)
                                    .isEqualTo(BatchInvarianceTest.bits(alone[s].logits().get(i)));
                        }
                    }
                }
            }
        }
    }
}
