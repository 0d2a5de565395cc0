package dgr.node.stage;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class HostClockTest {
    @Test
    void aStampIsComparedOnlyUnderThisProcesssClock() {
        // This process's clock always has an id (the boot's, or one of its own); an unknown one is never shared.
        assertThat(HostClock.ID).isNotEqualTo(HostClock.UNKNOWN);
        assertThat(HostClock.shared(HostClock.UNKNOWN)).isFalse();
        assertThat(HostClock.stamp(HostClock.ID ^ 1, 123)).isEqualTo(HostClock.NO_STAMP);
        assertThat(HostClock.stamp(HostClock.UNKNOWN, 123)).isEqualTo(HostClock.NO_STAMP);
        assertThat(HostClock.stamp(HostClock.ID, 123)).isEqualTo(123);
    }
}
