package dgr.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** Warm-up passes (a few, and the decode ones) leave no trace: the same prompt gives the same logits bits with or without them. */
class WarmUpTest {
    private static Path tiny() throws Exception {
        return Path.of(WarmUpTest.class.getResource("/conformance/models/llama-tiny-Q4_0.gguf").toURI());
    }

    private static float[] logits(boolean warm) throws Exception {
        try (Engine e = Engines.load(tiny(), EngineOptions.defaults().withThreads(2).withMaxRows(8).withContextLength(64))) {
            if (warm) {
                WarmUp.run(e, 3);
                // Decode and prompt passes past the warm-up context (48), so its sessions start again too.
                assertThat(WarmUp.decode(e, 800, 16, 60_000_000_000L)).isGreaterThanOrEqualTo(100);
            }
            try (StateSlot slot = e.openSlot()) {
                Batch b = new Batch(8, e.boundarySchema().rowWidth());
                int[] prompt = {1024, 5, 77, 300, 12};
                for (int i = 0; i < prompt.length; i++) b.addToken(slot, i, prompt[i], i == prompt.length - 1);
                ForwardResult r = e.forward(b);
                assertThat(slot.length()).isEqualTo(prompt.length);
                return r.copyOutput(prompt.length - 1);
            }
        }
    }

    @Test
    void warmUpChangesNoResult() throws Exception {
        float[] cold = logits(false), warm = logits(true);
        assertThat(warm.length).isEqualTo(cold.length);
        for (int i = 0; i < cold.length; i++) {
            assertThat(Float.floatToRawIntBits(warm[i])).as("logit %d", i).isEqualTo(Float.floatToRawIntBits(cold[i]));
        }
    }
}
