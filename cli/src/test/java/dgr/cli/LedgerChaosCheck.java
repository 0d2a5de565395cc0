package dgr.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * The ledger's chaos check of issue 25 ({@link LedgerChaos}): 1,000 requests across two nodes while the tracker
 * and the nodes are {@code kill -9}ed at random moments and restarted, then rows lost, rows double-counted and
 * tokens off (goal: all 0). Opt-in (minutes of CPU): {@code tools/ledger-chaos [REQUESTS] [SEED] [postgres|JDBC_URL]},
 * or {@code mvn -B -q -pl cli -am verify -Dtest=LedgerChaosCheck -Dsurefire.failIfNoSpecifiedTests=false
 * -Ddgr.chaos=true [-Ddgr.chaos.requests=1000] [-Ddgr.chaos.seed=1] [-Ddgr.chaos.db=jdbc:postgresql://...]}. The
 * report is written to {@code cli/target/ledger-chaos/report.json} with every process's log beside it.
 */
@EnabledIfSystemProperty(named = "dgr.chaos", matches = "true")
class LedgerChaosCheck {
    @Test
    void theLedgerMatchesGroundTruthThroughKill9OfTrackerAndNodes() throws Exception {
        long seed = Long.getLong("dgr.chaos.seed", 1);
        LedgerChaos.Result r = new LedgerChaos().run(new LedgerChaos.Options(Integer.getInteger("dgr.chaos.requests", 1000),
                seed, System.getProperty("dgr.chaos.db"),
                Path.of(System.getProperty("dgr.repo.root", "."), "cli", "target", "ledger-chaos"), 8, 3,
                LedgerChaos.random(seed)));
        String report = r.report().toPrettyString();
        System.out.println("ledger chaos check: " + report);
        assertThat(r.report().get("rows_lost").asInt()).as(report).isZero();
        assertThat(r.report().get("rows_double_counted").asInt()).as(report).isZero();
        assertThat(r.report().get("tokens_off").asLong()).as(report).isZero();
        assertThat(r.report().get("rows_left_open").asInt()).as(report).isZero();
        assertThat(r.keyReserved()).as(report).isZero();
        assertThat(r.keySpent()).as(report).isEqualTo(r.rowsBilled());
    }
}
