package dgr.tracker.ledger;

import static org.assertj.core.api.Assertions.assertThat;

import dgr.tracker.ledger.LedgerDatabase.Kind;
import dgr.tracker.ledger.Settlement.Outcome;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A tracker process killed with SIGKILL in the middle of its ledger writes loses nothing it had confirmed:
 * a child JVM reserves and settles request after request, printing each id once {@code settle} returned;
 * after a real kill -9, every printed id is settled with its exact tokens, and the key's spent and held
 * tokens equal what the rows say (an in-flight reservation is still held, never half-applied).
 */
class LedgerSurvivesKill9Test {
    @RegisterExtension
    static final TestDatabases DBS = new TestDatabases();

    /** The child: writes until killed. Args: JDBC URL, key. */
    public static void main(String[] args) {
        LedgerDatabase db = LedgerDatabase.open(args[0]);
        JdbcLedger ledger = new JdbcLedger(db, new ApiKeyStore(db, Clock.systemUTC()), "doomed");
        KeyHolder h = ledger.authenticate(args[1]).orElseThrow();
        for (int i = 0; ; i++) {
            String id = "r" + i;
            try {
                ledger.reserve(new RequestStart(id, h, "m", 100, id, Instant.now()));
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
            ledger.settle(new Settlement(id, "rc", List.of("n"), 10, 0, i % 50, i % 50, 0, Outcome.STOP, 200, null,
                    Instant.now()));
            System.out.println("settled " + id);
            System.out.flush();
        }
    }

    @ParameterizedTest
    @EnumSource(Kind.class)
    void everySettlementConfirmedBeforeAKill9IsInTheLedger(Kind kind) throws Exception {
        String url = DBS.newUrl(kind);
        String key;
        try (LedgerDatabase db = LedgerDatabase.open(url)) {
            key = new ApiKeyStore(db, Clock.systemUTC()).add("acme", null).key();
        }
        String java = ProcessHandle.current().info().command().orElseThrow();
        Process child = new ProcessBuilder(java, "--enable-native-access=ALL-UNNAMED", "-cp",
                System.getProperty("java.class.path"), LedgerSurvivesKill9Test.class.getName(), url, key)
                .redirectError(ProcessBuilder.Redirect.DISCARD).start();
        List<String> confirmed = new ArrayList<>();
        try (BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line; confirmed.size() < 60 && (line = out.readLine()) != null; ) {
                if (line.startsWith("settled ")) confirmed.add(line.substring(8));
            }
            new ProcessBuilder("kill", "-9", Long.toString(child.pid())).start().waitFor(5, TimeUnit.SECONDS);
            assertThat(child.waitFor(10, TimeUnit.SECONDS)).isTrue();
            for (String line; (line = out.readLine()) != null; ) if (line.startsWith("settled ")) confirmed.add(line.substring(8));
        } finally {
            child.destroyForcibly();
        }
        assertThat(child.exitValue()).as("killed by SIGKILL").isEqualTo(137);
        assertThat(confirmed).hasSizeGreaterThanOrEqualTo(60);

        try (LedgerDatabase db = LedgerDatabase.open(url); Connection c = db.dataSource().getConnection();
             Statement s = c.createStatement()) {
            long billedSettled = 0, heldOpen = 0;
            List<String> settled = new ArrayList<>();
            try (ResultSet rs = s.executeQuery("SELECT request_id, state, prompt_tokens, generated_tokens, reserved_tokens "
                    + "FROM requests")) {
                while (rs.next()) {
                    if (rs.getString(2).equals("settled")) {
                        settled.add(rs.getString(1));
                        int i = Integer.parseInt(rs.getString(1).substring(1));
                        assertThat(rs.getLong(3)).isEqualTo(10);
                        assertThat(rs.getLong(4)).isEqualTo(i % 50);
                        billedSettled += rs.getLong(3) + rs.getLong(4);
                    } else {
                        heldOpen += rs.getLong(5);
                    }
                }
            }
            assertThat(settled).containsAll(confirmed);
            ApiKeyStore.KeyInfo info = new ApiKeyStore(db, Clock.systemUTC()).list().getFirst();
            assertThat(info.spentTokens()).isEqualTo(billedSettled);
            assertThat(info.reservedTokens()).isEqualTo(heldOpen);
        }
    }
}
