package dgr.engine.deepseek4;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dgr.engine.Batch;
import dgr.engine.BoundarySchema;
import dgr.engine.StateSlot;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The bytes a V4 slot holds equal its declared layout's formula at every length. */
class Dsv4StateTest {
    static Dsv4Engine engine;

    @BeforeAll
    static void load() {
        engine = Dsv4Engine.load(Dsv4Fixture.resource(Dsv4Fixture.MODEL), Dsv4Fixture.options(64));
    }

    @AfterAll
    static void close() {
        engine.close();
    }

    /** dsv4-tiny written out by hand: ratios [0, 4, 128, 4], d 128, d_I 64, window 16, f32. */
    static long tinyFormula(int len) {
        long window = 4L * Math.min(len, 16) * 128 * 4;
        long csa = 2L * ((len / 4) * (128 + 64) * 4L + 8 * 2 * 256 * 4 + 8 * 2 * 128 * 4);
        long hca = (len / 128) * 128 * 4L + 128 * 2 * 128 * 4;
        return window + csa + hca;
    }

    @Test
    void slotBytesEqualTheLayoutFormulaBeforeAndPastTheWindowAndCompressionBoundaries() {
        StateSlot slot = engine.openSlot();
        int[] checkpoints = {0, 1, 3, 4, 5, 15, 16, 17, 63, 127, 128, 129, 200};
        int[] text = Dsv4Fixture.intArray(Dsv4Fixture.refJson(), "prompt", "tokens");
        Batch b = new Batch(64, engine.boundarySchema().rowWidth());
        for (int target : checkpoints) {
            while (slot.length() < target) {
                b.clear();
                int end = Math.min(target, slot.length() + 64);
                for (int p = slot.length(); p < end; p++) b.addToken(slot, p, text[p], p == end - 1);
                engine.forward(b);
            }
            assertThat(slot.length()).isEqualTo(target);
            assertThat(slot.bytes()).as("bytes at length %d", target)
                    .isEqualTo(engine.stateLayout().bytesForTokens(target))
                    .isEqualTo(tinyFormula(target));
        }
        slot.truncate(0);
        assertThat(slot.length()).isZero();
        assertThat(slot.bytes()).isEqualTo(engine.stateLayout().bytesForTokens(0));
    }

    @Test
    void aSlotCannotRollBackPartwayBecauseTheRingsOnlyHoldRecentTokens() {
        StateSlot slot = engine.openSlot();
        Batch b = new Batch(8, engine.boundarySchema().rowWidth());
        for (int p = 0; p < 6; p++) b.addToken(slot, p, 100 + p, false);
        engine.forward(b);
        slot.truncate(6);
        assertThat(slot.length()).isEqualTo(6);
        assertThatThrownBy(() -> slot.truncate(3)).isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    void boundaryIsAllHyperConnectionStreamsAndItsIdDiffersFromADenseModels() {
        BoundarySchema s = engine.boundarySchema();
        assertThat(s.rowWidth()).isEqualTo(4 * 256);
        assertThat(s.id()).isNotEqualTo(new BoundarySchema("llama", 256, "f32", 1).id()).startsWith("deepseek4-");
        assertThat(engine.stateLayout().id()).startsWith("deepseek4-");
    }

    @Test
    void rowsThatBreakTheBatchRulesAreRejectedBeforeAnyStateChanges() {
        StateSlot slot = engine.openSlot();
        Batch b = new Batch(4, engine.boundarySchema().rowWidth());
        b.addToken(slot, 0, 5, true);
        b.addToken(slot, 2, 6, true); // gap
        assertThatThrownBy(() -> engine.forward(b)).isInstanceOf(IllegalArgumentException.class);
        b.clear();
        b.addToken(slot, 0, 5000, true); // outside the vocabulary
        assertThatThrownBy(() -> engine.forward(b)).isInstanceOf(IllegalArgumentException.class);
        assertThat(slot.length()).isZero();
        assertThat(slot.bytes()).isEqualTo(engine.stateLayout().bytesForTokens(0));
    }
}
