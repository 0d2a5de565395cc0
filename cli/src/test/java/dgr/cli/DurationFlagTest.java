package dgr.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Issue 28, item 3: one duration grammar for every flag. */
class DurationFlagTest {

    @Test
    void everyUnitABareNumberAndIso8601ParseToTheSameDurations() {
        assertThat(DurationFlag.parse("--duration", "500ms")).isEqualTo(Duration.ofMillis(500));
        assertThat(DurationFlag.parse("--duration", "30s")).isEqualTo(Duration.ofSeconds(30));
        assertThat(DurationFlag.parse("--duration", "90")).isEqualTo(Duration.ofSeconds(90));
        assertThat(DurationFlag.parse("--duration", "1.5s")).isEqualTo(Duration.ofMillis(1500));
        assertThat(DurationFlag.parse("--request-timeout", "2m")).isEqualTo(Duration.ofMinutes(2));
        assertThat(DurationFlag.parse("--request-timeout", " 1h ")).isEqualTo(Duration.ofHours(1));
        assertThat(DurationFlag.parse("--queue-wait", "PT30S")).isEqualTo(Duration.ofSeconds(30));
    }

    @Test
    void aBadValueIsRefusedNamingTheFlagAndTheValue() {
        assertThatThrownBy(() -> DurationFlag.parse("--queue-wait", "soon"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("--queue-wait: 'soon' is not a duration");
        assertThatThrownBy(() -> DurationFlag.parse("--duration", "-5s")).hasMessageContaining("'-5s'");
    }
}
