package dgr.engine.llama;

import static org.assertj.core.api.Assertions.assertThat;

import dgr.engine.Engine;
import dgr.engine.EngineOptions;
import dgr.engine.Engines;
import dgr.engine.StateSlot;
import org.junit.jupiter.api.Test;

/**
 * The engine counts its working buffers, the per-expert gathers of a mixture of experts included:
 * they grow with the batches it has run (up to their bound) and are reported, not hidden.
 */
class WorkspaceBytesTest {

    @Test
    void expertGatherBuffersAreCountedOnceTheyGrow() throws Exception {
        EngineOptions opts = EngineOptions.defaults().withThreads(2).withMaxRows(16);
        try (Engine e = Engines.load(TinyModels.model("mixtral-Q4_0"), opts); StateSlot slot = e.openSlot()) {
            long before = e.workspaceBytes();
            assertThat(before).isPositive();
            TinyModels.prefill(e, slot, new int[] {39, 695, 78, 995, 11, 352, 17, 18, 284, 74, 641});
            long after = e.workspaceBytes();
            assertThat(after).isGreaterThan(before);
            TinyModels.prefill(e, e.openSlot(), new int[] {39, 695, 78});
            // Buffers are kept, never shrunk. (Not "equal": which worker's scratch grows for which
            // input depends on which chunks each worker happened to claim.)
            assertThat(e.workspaceBytes()).isGreaterThanOrEqualTo(after);
        }
    }

    @Test
    void aDenseModelCountsItsActivationsAndScratch() throws Exception {
        EngineOptions opts = EngineOptions.defaults().withThreads(2).withMaxRows(8);
        try (Engine e = Engines.load(TinyModels.model("llama-Q4_0"), opts)) {
            // At least the residual stream and logits for 8 rows, 4 bytes each.
            assertThat(e.workspaceBytes()).isGreaterThanOrEqualTo(4L * 8 * (e.info().nEmbd() + e.info().vocabSize()));
        }
    }
}
