package dgr.engine.deepseek4;

import static org.assertj.core.api.Assertions.assertThat;

import dgr.engine.Batch;
import dgr.engine.Engine;
import dgr.engine.Engines;
import dgr.engine.StateSlot;
import dgr.gguf.synth.QuantMix;
import dgr.gguf.synth.Synth;
import dgr.gguf.synth.SynthPreset;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A synthesized dsv4-tiny loads through the engine factory and gives finite, varied logits. */
class Dsv4SynthTest {
    @TempDir Path dir;

    @Test
    void synthesizedDsv4TinyRunsWithFiniteNonDegenerateLogits() {
        Path f = dir.resolve("dsv4-tiny.gguf");
        Synth.write(SynthPreset.byName("dsv4-tiny"), QuantMix.parse("Q8_0"), 42, f);
        try (Engine e = Engines.load(f, Dsv4Fixture.options(160))) {
            assertThat(e.info().architecture()).isEqualTo("deepseek4");
            assertThat(e.boundarySchema().rowWidth()).isEqualTo(4 * 256);
            StateSlot slot = e.openSlot();
            Batch b = new Batch(160, e.boundarySchema().rowWidth());
            // 140 tokens: crosses the window, CSA blocks with the indexer choosing, and the first HCA block.
            for (int p = 0; p < 140; p++) b.addToken(slot, p, (p * 37 + 11) % 1025, p % 20 == 19);
            var r = e.forward(b);
            float[] first = null;
            for (int p = 19; p < 140; p += 20) {
                float[] l = r.copyOutput(p);
                double min = Double.MAX_VALUE, max = -Double.MAX_VALUE;
                for (float v : l) {
                    assertThat(Float.isFinite(v)).as("logit at position %d", p).isTrue();
                    min = Math.min(min, v);
                    max = Math.max(max, v);
                }
                assertThat(max - min).as("logit spread at %d", p).isBetween(0.5, 1000.0);
                if (first == null) first = l;
                else assertThat(l).as("position %d differs from position 19", p).isNotEqualTo(first);
            }
            assertThat(slot.bytes()).isEqualTo(e.stateLayout().bytesForTokens(140));
        }
    }
}
