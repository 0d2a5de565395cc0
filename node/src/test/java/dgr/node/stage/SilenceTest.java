package dgr.node.stage;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The silence a link allows its stage follows the gaps between its messages lately, never below its pulse period. */
class SilenceTest {
    private static final long MS = 1_000_000L, PERIOD = 100 * MS;

    @Test
    void gapsCountOnceTheStagePulsesAndAreForgottenAfterTwoWindows() {
        long t = 0;
        Silence s = new Silence(t);
        s.heard(t += 3_000 * MS, 0);  // a reply long after the stream opened: not a gap of a pulsing stage
        assertThat(s.pulses()).isFalse();
        assertThat(s.recentGapNanos()).isZero();

        s.heard(t += 50 * MS, PERIOD);
        assertThat(s.pulses()).isTrue();
        assertThat(s.unitNanos()).as("no gap measured yet: the period").isEqualTo(PERIOD);
        s.heard(t += 120 * MS, PERIOD);
        s.heard(t += 400 * MS, 0);  // the machine was loaded: a late token
        s.heard(t += 30 * MS, 0);
        assertThat(s.recentGapNanos()).isEqualTo(400 * MS);
        assertThat(s.unitNanos()).isEqualTo(400 * MS);
        assertThat(s.heard()).isEqualTo(t);

        // The next window keeps the last one's longest gap; the one after forgets it.
        s.heard(t += Silence.WINDOW_NANOS, 0);
        s.heard(t += 110 * MS, PERIOD);
        assertThat(s.recentGapNanos()).as("the window's own gap of 5 s").isEqualTo(Silence.WINDOW_NANOS);
        s.heard(t += Silence.WINDOW_NANOS, PERIOD);  // starts a window: the 5 s gap is now the one before's
        s.heard(t += 130 * MS, PERIOD);
        assertThat(s.recentGapNanos()).isEqualTo(Silence.WINDOW_NANOS);
        for (int i = 0; i < 100; i++) s.heard(t += 110 * MS, PERIOD);
        assertThat(s.recentGapNanos()).isEqualTo(110 * MS);
        assertThat(s.unitNanos()).isEqualTo(110 * MS);
    }
}
