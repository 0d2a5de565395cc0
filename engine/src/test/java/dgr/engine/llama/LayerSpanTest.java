package dgr.engine.llama;

import static org.assertj.core.api.Assertions.assertThat;

import dgr.engine.Batch;
import dgr.engine.Engine;
import dgr.engine.EngineOptions;
import dgr.engine.Engines;
import dgr.engine.ForwardResult;
import dgr.engine.StateSlot;
import org.junit.jupiter.params.ParameterizedTest;

/**
 * DESIGN.md contract 1 across stages: [0,k) then [k,n) with boundary rows equals the whole model bit
 * for bit. Gemma 3 split at layer 3 of 6: the tail's layer 5 is the global one, so a stage must
 * count layers from the model's first, not its own.
 */
class LayerSpanTest {

    static java.util.stream.Stream<org.junit.jupiter.params.provider.Arguments> cases() {
        java.util.List<org.junit.jupiter.params.provider.Arguments> out = new java.util.ArrayList<>();
        for (EngineOptions.Kind kind : TinyModels.KINDS) {
            out.add(org.junit.jupiter.params.provider.Arguments.of("llama-tiny Q4_K_M", kind));
            out.add(org.junit.jupiter.params.provider.Arguments.of("gemma3-tiny Q8_0", kind));
        }
        return out.stream();
    }

    @ParameterizedTest(name = "{0} {1}")
    @org.junit.jupiter.params.provider.MethodSource("cases")
    void twoStagesWithBoundaryRowsEqualTheWholeModelBitForBit(String model, EngineOptions.Kind kind) {
        boolean gemma = model.startsWith("gemma3");
        java.nio.file.Path file = gemma ? TinyModels.synthesized(dgr.gguf.synth.SynthPreset.GEMMA3_TINY, "Q8_0") : TinyModels.model("Q4_K_M");
        int layers = gemma ? 6 : 2, split = gemma ? 3 : 1;
        EngineOptions o = EngineOptions.defaults().withKind(kind).withThreads(2).withMaxRows(32);
        int[] prompt = {1024, 464, 627, 624, 275, 305, 675, 277, 78, 87};
        try (Engine whole = Engines.load(file, o);
             Engine head = Engines.load(file, o.withSpan(0, split));
             Engine tail = Engines.load(file, o.withSpan(split, layers));
             StateSlot sw = whole.openSlot(); StateSlot sh = head.openSlot(); StateSlot st = tail.openSlot()) {
            assertThat(head.recipe().isFirstStage()).isTrue();
            assertThat(head.recipe().isLastStage()).isFalse();
            assertThat(tail.recipe().isLastStage()).isTrue();
            assertThat(head.recipe().id()).isNotEqualTo(whole.recipe().id());
            assertThat(head.boundarySchema()).isEqualTo(tail.boundarySchema());
            assertThat(head.stateLayout().bytesForTokens(1) * layers / split).isEqualTo(whole.stateLayout().bytesForTokens(1));

            int[] tokens = prompt;
            for (int step = 0; step < 4; step++) {
                ForwardResult w = TinyModels.prefill(whole, sw, tokens);
                ForwardResult h = TinyModels.prefill(head, sh, tokens);
                assertThat(h.outputWidth()).isEqualTo(whole.info().nEmbd());
                Batch tb = new Batch(32, tail.boundarySchema().rowWidth());
                for (int r = 0; r < tokens.length; r++) {
                    tb.addBoundary(st, st.length() + r, h.outputArray(), h.outputOffset(r), true);
                }
                ForwardResult t = tail.forward(tb);
                for (int r = 0; r < tokens.length; r++) {
                    assertThat(BatchInvarianceTest.bits(t.copyOutput(r))).as("step %d row %d", step, r)
                            .isEqualTo(BatchInvarianceTest.bits(w.copyOutput(r)));
                }
                int next = TinyModels.argmax(w.outputArray(), w.outputOffset(tokens.length - 1), w.outputWidth());
                tokens = new int[] {next};
            }
            assertThat(sh.length()).isEqualTo(sw.length());
            assertThat(st.length()).isEqualTo(sw.length());
        }
    }
}
