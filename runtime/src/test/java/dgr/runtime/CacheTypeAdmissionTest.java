package dgr.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import dgr.engine.Engine;
import dgr.engine.EngineOptions;
import dgr.engine.Engines;
import dgr.engine.KvCacheType;
import dgr.engine.KvCacheTypes;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Each K/V cache type's real bytes are what admission reserves: against one state budget a compact
 * cache admits as many more sessions as it is smaller (llama-tiny: 2048 bytes per token in f32,
 * 1024 in f16 and bf16, 544 in q8_0), and its compatibility key differs from f32's in the recipe
 * and the state layout, so the two never share a batch.
 */
class CacheTypeAdmissionTest {
    static final long BUDGET = 1L << 20;
    static final int PROMPT = 16, MAX_TOKENS = 240;

    @Test
    void aStateBudgetAdmitsSessionsByTheCacheTypesRealBytesPerToken() throws URISyntaxException {
        Path model = Path.of(CacheTypeAdmissionTest.class.getResource("/models/llama-tiny-Q4_0.gguf").toURI());
        CompatibilityKey f32Key = null;
        // 255 positions per session: f32 510 KiB (2 fit in 1 MiB), f16/bf16 255 KiB (4), q8_0 135 KiB (7).
        int[] expected = {2, 4, 4, 7};
        KvCacheType[] types = KvCacheType.values();
        for (int t = 0; t < types.length; t++) {
            EngineOptions eo = EngineOptions.defaults().withThreads(1).withMaxRows(64).withContextLength(256)
                    .withCacheTypes(KvCacheTypes.of(types[t]));
            try (Engine engine = Engines.load(model, eo);
                 Scheduler s = new Scheduler(engine, SchedulerConfig.defaults().withBatch(16, 64).withStateBudgetBytes(BUDGET))) {
                // Positions a session can hold: the prompt and every generated token but the last.
                int positions = (int) ContextRule.positions(PROMPT, MAX_TOKENS);
                long perSession = engine.stateLayout().bytesForTokens(positions);
                assertThat(perSession).as(types[t].flag()).isEqualTo(positions * engine.stateLayout().bytesPerTokenByCacheType().get(types[t]));
                SplittableRandom rnd = new SplittableRandom(1);
                for (int i = 0; i < 10; i++) Runs.accepted(s.submit(SessionRequest.of("t", Runs.prompt(rnd, PROMPT, 64), MAX_TOKENS)));
                s.runIteration();
                assertThat(s.runningCount()).as(types[t].flag()).isEqualTo(expected[t]).isEqualTo((int) (BUDGET / perSession));
                assertThat(s.reservedBytes()).as(types[t].flag()).isEqualTo(expected[t] * perSession);
                CompatibilityKey key = CompatibilityKey.of(engine, Phase.DECODE);
                if (f32Key == null) {
                    f32Key = key;
                } else {
                    assertThat(key.stateLayoutId()).isNotEqualTo(f32Key.stateLayoutId()).contains(types[t].flag());
                    assertThat(key.recipeId()).isNotEqualTo(f32Key.recipeId());
                    assertThat(key).isNotEqualTo(f32Key);
                }
            }
        }
    }
}
