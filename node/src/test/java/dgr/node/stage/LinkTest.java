package dgr.node.stage;

import static org.assertj.core.api.Assertions.assertThat;

import dgr.node.stage.wire.Up;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** A link's reply bookkeeping: which flush falls due first, and when its rows stop counting as unanswered. */
class LinkTest {
    private static final long LATER = 1_000_000_000_000L; // far past any deadline of the clock below
    private Link link;

    @BeforeEach
    void open() {
        // Nothing listens on port 1: the stream fails in the background, which the bookkeeping does not read.
        Link.Owner none = new Link.Owner() {
            public void received(Link l, Up up) {}

            public void ended(Link l, String reason) {}
        };
        link = new Link("127.0.0.1:1", ClusterToken.of("link-test-token"), StepClock.defaults(), none);
    }

    @AfterEach
    void close() { link.kill(); }

    private static Link.Reply r(String session, int position) { return new Link.Reply(session, position); }

    @Test
    void aStageThatNeverPulsedIsNotDeclaredHungForItsSilence() {
        // The stage at port 1 never answers (nothing listens): no pulse came, so only the replies' deadline applies.
        link.expect(List.of(r("a", 0)), 1);
        assertThat(link.firstDue()).isNotNull();
        assertThat(link.silentAfter() - System.nanoTime()).isGreaterThan(LATER);
    }

    @Test
    void aWarmUpFlushIsNeverDue() {
        link.expect(List.of(r(Wire.WARM_PREFIX + "1", 0)), 1);
        assertThat(link.firstDue()).isNull();
        assertThat(link.dueBefore(System.nanoTime() + LATER)).isFalse();
    }

    @Test
    void theEarliestFlushIsDueFirstAndAnsweredFlushesLeave() {
        link.expect(List.of(r("a", 0)), 1);
        link.expect(List.of(r("b", 0), r("c", 0)), 2);
        Link.Sent first = link.firstDue();
        assertThat(first.rowsAhead).isEqualTo(1);
        assertThat(link.dueBefore(System.nanoTime() + LATER)).isTrue();
        assertThat(link.answered(r("a", 0))).isNotNegative();
        Link.Sent second = link.firstDue();
        assertThat(second.rowsAhead).isEqualTo(3); // its own 2 rows behind a's 1, unanswered when it was sent
        assertThat(link.answered(r("b", 0))).isNotNegative();
        assertThat(link.firstDue()).isSameAs(second);
        assertThat(link.answered(r("c", 0))).isNotNegative();
        assertThat(link.firstDue()).isNull();
        // Every row answered: a new flush waits behind its own rows only.
        link.expect(List.of(r("d", 0)), 2);
        assertThat(link.firstDue().rowsAhead).isEqualTo(2);
    }

    @Test
    void aReplyAwaitedTwiceReleasesTheEarlierFlush() {
        link.expect(List.of(r("a", 0)), 1);
        link.expect(List.of(r("a", 0)), 1);
        assertThat(link.answered(r("a", 0))).isNotNegative();
        assertThat(link.firstDue()).isNull();
        link.expect(List.of(r("b", 0)), 1);
        assertThat(link.firstDue().rowsAhead).isEqualTo(1);
    }

    @Test
    void aForgottenSessionsRowsAreNoLongerAwaited() {
        link.expect(List.of(r("s", 0), r("t", 0)), 2);
        link.expect(List.of(r("s1", 0)), 1);
        link.forget("s");
        assertThat(link.firstDue()).isNotNull();
        link.forget("t");
        assertThat(link.firstDue()).isNotNull(); // "s1" is another session than "s"
        link.forget("s1");
        assertThat(link.firstDue()).isNull();
        link.expect(List.of(r("u", 0)), 1);
        assertThat(link.firstDue().rowsAhead).isEqualTo(1);
    }

    @Test
    void aReplyBeforeItsRowWasExpectedCountsWhenItIs() {
        assertThat(link.answered(r("e", 4))).isEqualTo(-1);
        link.expect(List.of(r("e", 4)), 1);
        assertThat(link.firstDue()).isNull();
        link.expect(List.of(r("f", 0)), 1);
        assertThat(link.firstDue().rowsAhead).isEqualTo(1);
    }
}
