package dgr.node.stage;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Small and large flushes' replies are timed apart, and each kind's deadline comes from its own. */
class ReplyRatesTest {
    private static final long MS = 1_000_000L;

    @Test
    void aPromptChunksDeadlineComesFromPromptReplies() {
        ReplyRates r = new ReplyRates(50 * MS);
        assertThat(r.measured()).isFalse();
        r.update(256 * MS, 8);  // c=8 decode: 32 ms a row
        assertThat(r.nanosPerRow(8)).isEqualTo(32.0 * MS);
        // No large reply yet: a 50-row flush gets the decode rate, as before the kinds were apart.
        assertThat(r.nanosPerRow(50)).isEqualTo(32.0 * MS);
        r.update(500 * MS, 50);  // a prompt chunk: 10 ms a row
        assertThat(r.nanosPerRow(50)).isEqualTo(10.0 * MS);
        assertThat(r.nanosPerRow(ReplyRates.LARGE_ROWS)).as("16 rows ahead is still small").isEqualTo(32.0 * MS);
        // Each kind averages its own replies (weight 1/4 for the newest).
        r.update(1000 * MS, 50);
        assertThat(r.nanosPerRow(50)).isEqualTo(0.75 * 10 * MS + 0.25 * 20 * MS);
        assertThat(r.nanosPerRow(4)).isEqualTo(32.0 * MS);
        assertThat(r.known()).isEqualTo(32.0 * MS);

        StepClock clock = StepClock.defaults();
        long decode = clock.deadline(0, true, r.nanosPerRow(8), 8), prompt = clock.deadline(0, true, r.nanosPerRow(50), 50);
        assertThat(decode).isEqualTo(250 * MS + 4 * 256 * MS);
        assertThat(prompt).isEqualTo(250 * MS + (long) (4 * 12.5 * MS * 50));
    }

    @Test
    void aSmallFlushBeforeAnySmallReplyUsesTheLargeRateAndASeedOnlyFillsAnUnmeasuredLink() {
        ReplyRates r = new ReplyRates(50 * MS);
        r.seed(20 * MS);
        assertThat(r.measured()).isTrue();
        assertThat(r.nanosPerRow(1)).isEqualTo(20.0 * MS);
        assertThat(r.nanosPerRow(64)).isEqualTo(20.0 * MS);

        ReplyRates large = new ReplyRates(50 * MS);
        large.update(640 * MS, 64);
        assertThat(large.nanosPerRow(2)).isEqualTo(10.0 * MS);
        assertThat(large.known()).isEqualTo(10.0 * MS);
        large.seed(99 * MS);
        assertThat(large.nanosPerRow(64)).as("a measured link keeps its own rate").isEqualTo(10.0 * MS);
    }
}
