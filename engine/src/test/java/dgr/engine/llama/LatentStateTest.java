package dgr.engine.llama;

import static org.assertj.core.api.Assertions.assertThat;

import dgr.engine.Batch;
import dgr.engine.Engine;
import dgr.engine.EngineOptions;
import dgr.engine.Engines;
import dgr.engine.StateSlot;
import org.junit.jupiter.api.Test;

/**
 * Latent attention (deepseek2) keeps one latent K page per layer and no V pages: the layout says
 * so, and a slot's bytes are that many. (That the values read from the K pages are right, across
 * blocks and pages, is held by {@code LlamaCppCrossCheckTest} and {@code BatchInvarianceTest}.)
 */
class LatentStateTest {
    @Test
    void deepseek2KeepsTheLatentOnceAndNoValuePages() {
        // deepseek2-tiny: 3 layers, latent 128 + rotated key 32 per token.
        try (Engine e = Engines.load(TinyModels.model("deepseek2-F32"), EngineOptions.defaults().withMaxRows(1));
             StateSlot slot = e.openSlot()) {
            KvLayout layout = (KvLayout) e.stateLayout();
            assertThat(layout.kOnly()).isTrue();
            assertThat(layout.id()).isEqualTo("llama-kv-f32/3x1x1x160/k-only");
            assertThat(layout.bytesForTokens(100)).isEqualTo(100L * 3 * 160 * Float.BYTES);
            Batch b = new Batch(1, e.boundarySchema().rowWidth());
            for (int pos = 0; pos < 70; pos++) {
                b.clear();
                b.addToken(slot, pos, 40 + pos, pos == 69);
                e.forward(b);
            }
            assertThat(slot.length()).isEqualTo(70);
            assertThat(slot.bytes()).isEqualTo(70L * 3 * 160 * Float.BYTES);
        }
    }
}
