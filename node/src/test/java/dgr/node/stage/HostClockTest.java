package dgr.node.stage;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class HostClockTest {
    @Test
    void aStampIsComparedOnlyUnderThisProcesssClock() {
        // Where the host names its boot (Linux), this process's clock has an id; an unknown one is never shared.
        if (Files.exists(Path.of("/proc/sys/kernel/random/boot_id"))) assertThat(HostClock.ID).isNotEqualTo(HostClock.UNKNOWN);
        assertThat(HostClock.shared(HostClock.UNKNOWN)).isFalse();
        assertThat(HostClock.stamp(HostClock.ID ^ 1, 123)).isEqualTo(HostClock.NO_STAMP);
        assertThat(HostClock.stamp(HostClock.UNKNOWN, 123)).isEqualTo(HostClock.NO_STAMP);
        if (HostClock.ID != HostClock.UNKNOWN) assertThat(HostClock.stamp(HostClock.ID, 123)).isEqualTo(123);
    }
}
