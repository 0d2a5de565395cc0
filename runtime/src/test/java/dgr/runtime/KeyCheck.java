package dgr.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import dgr.runtime.SchedulerEvent.IterationEvent;
import dgr.runtime.SchedulerEvent.SessionAdmitted;
import java.util.List;
import java.util.Map;

/** Checks, batch by batch, that the rows the engine really ran match the one key the scheduler reported. */
final class KeyCheck {
    private KeyCheck() {}

    /** Classifies every recorded row of the engine by its session's prompt length, batch by batch. */
    static void oneKeyPerBatch(FakeEngine engine, EventLog log, Map<Long, Integer> promptLengthBySeq) {
        // The fake opens slot ids in order, and the scheduler opens slots in admission order.
        List<SessionAdmitted> admitted = log.of(SessionAdmitted.class);
        List<IterationEvent> iterations = log.iterations();
        List<FakeEngine.BatchRecord> batches = engine.batches();
        assertThat(batches).hasSameSizeAs(iterations);
        for (int i = 0; i < batches.size(); i++) {
            IterationEvent e = iterations.get(i);
            assertThat(e.key().engine()).isEqualTo(engine.id());
            assertThat(e.key().recipeId()).isEqualTo(engine.recipe().id());
            assertThat(e.key().stateLayoutId()).isEqualTo(engine.stateLayout().id());
            int prefillRows = 0;
            int decodeRows = 0;
            for (FakeEngine.Row row : batches.get(i).rows()) {
                long seq = admitted.get(row.slotId()).sequenceId();
                if (row.position() < promptLengthBySeq.get(seq)) prefillRows++;
                else decodeRows++;
            }
            switch (e.key().phaseClass()) {
                case PREFILL -> assertThat(decodeRows).as("decode rows in a prefill batch").isZero();
                case DECODE -> assertThat(prefillRows).as("prefill rows in a decode batch").isZero();
                case MIXED -> assertThat(engine.features().mixedPrefillDecode()).isTrue();
            }
            assertThat(decodeRows).isEqualTo(e.decodeRows());
            assertThat(prefillRows + decodeRows).isEqualTo(e.tokens());
        }
    }
}
