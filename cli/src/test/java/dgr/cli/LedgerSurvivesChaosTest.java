package dgr.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The chaos check's lean form, in {@code ./dgr test}: real processes (a tracker, two nodes with their accounting
 * journals, SQLite), 24 requests of every kind, one {@code kill -9} of the tracker with streams in flight and one
 * of a node with streams in flight, each restarted; then every request's row is billed exactly its ground truth
 * (the client's usage, else the nodes' accounting, the killed node's reloaded from its journal; a stream that died
 * running with its node, known only by its client, at the prompt and at least what its client received), none
 * lost, none left open, and the key's spent tokens equal the rows' sum with nothing left reserved.
 */
class LedgerSurvivesChaosTest {
    @Test
    void everyTokenIsBilledExactlyOnceThroughKill9OfTheTrackerAndANode() throws Exception {
        LedgerChaos.Kills oneOfEach = c -> {
            c.awaitFinished(3);
            c.awaitMidStream(2, Duration.ofSeconds(20));
            c.killTracker(300);
            c.awaitFinished(12);
            c.awaitMidStream(2, Duration.ofSeconds(20));
            c.killNode(0, 300);
        };
        LedgerChaos.Result r = new LedgerChaos().run(new LedgerChaos.Options(24, 7, null,
                Path.of(System.getProperty("dgr.repo.root", "."), "cli", "target", "ledger-chaos-lean"), 6, 4, oneOfEach));
        String report = r.report().toPrettyString();
        assertThat(r.report().get("kills").size()).as(report).isEqualTo(2);
        assertThat(r.report().get("rows_lost").asInt()).as(report).isZero();
        assertThat(r.report().get("rows_double_counted").asInt()).as(report).isZero();
        assertThat(r.report().get("tokens_off").asLong()).as(report).isZero();
        assertThat(r.report().get("rows_left_open").asInt()).as(report).isZero();
        assertThat(r.keyReserved()).as(report).isZero();
        assertThat(r.keySpent()).as(report).isEqualTo(r.rowsBilled()).isPositive();
    }
}
