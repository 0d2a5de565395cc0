package dgr.engine.deepseek4;

import static org.assertj.core.api.Assertions.assertThat;

import dgr.engine.StateSlot;
import org.junit.jupiter.api.Test;

/**
 * The V4 engine's working buffers are allocated once, reused by every layer and pass, and counted
 * (Engine.workspaceBytes): a node's capability report then counts a V4 model's too. Reuse must not
 * leak one pass into the next: a session's logits after other sessions dirtied every buffer are those
 * of a fresh engine, bit for bit.
 */
class Dsv4WorkspaceTest {
    private static final int[] OTHER = {5, 77, 301, 12, 9, 640, 33, 2, 918, 41, 7, 150, 88, 260, 19, 3, 444, 71, 26, 500};
    private static final int[] PROMPT = {17, 256, 8, 93, 600, 11, 42};

    @Test
    void buffersAreCountedAndOnlyGrow() {
        try (Dsv4Engine e = Dsv4Engine.load(Dsv4Fixture.resource(Dsv4Fixture.MODEL), Dsv4Fixture.options(16).withThreads(2))) {
            long atLoad = e.workspaceBytes();
            // At least the residual streams and the logits of 16 rows, 4 bytes each.
            assertThat(atLoad).isGreaterThanOrEqualTo(4L * 16 * (e.boundarySchema().rowWidth() + e.info().vocabSize()));
            try (StateSlot s = e.openSlot()) {
                Dsv4Fixture.prefill(e, s, OTHER, 16);
            }
            long after = e.workspaceBytes();
            // The attention's buffers, the expert slots' gathers and the workers' scratch grew with the batches.
            assertThat(after).isGreaterThan(atLoad);
            try (StateSlot s = e.openSlot()) {
                Dsv4Fixture.prefill(e, s, PROMPT, 3);
            }
            assertThat(e.workspaceBytes()).isGreaterThanOrEqualTo(after);
        }
    }

    @Test
    void reusedBuffersGiveAFreshEnginesBits() {
        float[][] fresh, reused;
        try (Dsv4Engine e = Dsv4Engine.load(Dsv4Fixture.resource(Dsv4Fixture.MODEL), Dsv4Fixture.options(16).withThreads(2));
             StateSlot s = e.openSlot()) {
            fresh = Dsv4Fixture.prefill(e, s, PROMPT, 4);
        }
        try (Dsv4Engine e = Dsv4Engine.load(Dsv4Fixture.resource(Dsv4Fixture.MODEL), Dsv4Fixture.options(16).withThreads(2))) {
            try (StateSlot other = e.openSlot()) {
                Dsv4Fixture.prefill(e, other, OTHER, 16);
            }
            try (StateSlot s = e.openSlot()) {
                reused = Dsv4Fixture.prefill(e, s, PROMPT, 4);
            }
        }
        for (int p = 0; p < PROMPT.length; p++) {
            assertThat(reused[p]).as("position %d", p).containsExactly(fresh[p]);
        }
    }
}
