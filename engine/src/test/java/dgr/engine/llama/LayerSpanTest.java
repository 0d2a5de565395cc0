package dgr.engine.llama;

import static org.assertj.core.api.Assertions.assertThat;

import dgr.engine.Batch;
import dgr.engine.Engine;
import dgr.engine.EngineOptions;
import dgr.engine.Engines;
import dgr.engine.ForwardResult;
import dgr.engine.StateSlot;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** DESIGN.md contract 1 across stages: [0,1) then [1,2) with boundary rows equals the whole model bit for bit. */
class LayerSpanTest {

    @ParameterizedTest
    @EnumSource(EngineOptions.Kind.class)
    void twoStagesWithBoundaryRowsEqualTheWholeModelBitForBit(EngineOptions.Kind kind) {
        EngineOptions o = EngineOptions.defaults().withKind(kind).withThreads(2).withMaxRows(32);
        int[] prompt = {1024, 464, 627, 624, 275, 305, 675, 277, 78, 87};
        try (Engine whole = Engines.load(TinyModels.model("Q4_K_M"), o);
             Engine head = Engines.load(TinyModels.model("Q4_K_M"), o.withSpan(0, 1));
             Engine tail = Engines.load(TinyModels.model("Q4_K_M"), o.withSpan(1, 2));
             StateSlot sw = whole.openSlot(); StateSlot sh = head.openSlot(); StateSlot st = tail.openSlot()) {
            assertThat(head.recipe().isFirstStage()).isTrue();
            assertThat(head.recipe().isLastStage()).isFalse();
            assertThat(tail.recipe().isLastStage()).isTrue();
            assertThat(head.recipe().id()).isNotEqualTo(whole.recipe().id());
            assertThat(head.boundarySchema()).isEqualTo(tail.boundarySchema());
            assertThat(head.stateLayout().bytesForTokens(1) * 2).isEqualTo(whole.stateLayout().bytesForTokens(1));

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
