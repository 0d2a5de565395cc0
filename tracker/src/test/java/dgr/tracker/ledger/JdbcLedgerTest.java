package dgr.tracker.ledger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dgr.tracker.ledger.LedgerDatabase.Kind;
import dgr.tracker.ledger.Settlement.Outcome;
import java.io.StringWriter;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The ledger's single-tracker guarantees, each on SQLite and on a real PostgreSQL. */
class JdbcLedgerTest {
    @RegisterExtension
    static final TestDatabases DBS = new TestDatabases();

    private static final Instant T0 = Instant.parse("2026-12-01T10:00:00Z");

    static JdbcLedger ledger(LedgerDatabase db) {
        return new JdbcLedger(db, new ApiKeyStore(db, Clock.systemUTC()), "tracker-a");
    }

    static RequestStart start(String id, KeyHolder holder, long reserved) {
        return new RequestStart(id, holder, "llama-tiny", reserved, "sha-" + id, T0);
    }

    static Settlement settlement(String id, long prompt, long generated, Outcome outcome) {
        return new Settlement(id, "recipe-1", List.of("node-a"), prompt, 0, generated, generated, 0, outcome, 200,
                "{\"id\":\"" + id + "\"}", T0.plusSeconds(2));
    }

    @ParameterizedTest
    @EnumSource(Kind.class)
    void keysAreStoredOnlyAsHashesAndCheckedAgainstThem(Kind kind) throws Exception {
        try (LedgerDatabase db = DBS.open(kind); JdbcLedger ledger = ledger(db)) {
            ApiKeyStore keys = new ApiKeyStore(db, Clock.systemUTC());
            assertThat(ledger.keysRequired()).isFalse();
            ApiKeyStore.NewKey k = keys.add("acme", 1000L);
            assertThat(ledger.keysRequired()).isTrue();
            assertThat(ledger.authenticate(k.key())).contains(new KeyHolder(k.keyId(), "acme"));

            try (Connection c = db.dataSource().getConnection(); Statement s = c.createStatement();
                 ResultSet rs = s.executeQuery("SELECT * FROM api_keys")) {
                rs.next();
                for (int i = 1; i <= rs.getMetaData().getColumnCount(); i++) {
                    assertThat(String.valueOf(rs.getObject(i))).doesNotContain(k.key().substring(17));
                }
            }
            String otherSecret = k.key().substring(0, k.key().length() - 1)
                    + (k.key().endsWith("A") ? "B" : "A");
            assertThat(ledger.authenticate(otherSecret)).isEmpty();
            assertThat(ledger.authenticate("sk-not-a-dgr-key")).isEmpty();
            assertThat(ledger.authenticate("dgr-000000000000-x")).isEmpty();
            assertThat(ledger.authenticate(null)).isEmpty();
        }
    }

    @ParameterizedTest
    @EnumSource(Kind.class)
    void aRevokedKeyIsRefusedAtOnceByEveryTrackerOnTheDatabase(Kind kind) throws Exception {
        String url = DBS.newUrl(kind);
        try (LedgerDatabase dbA = LedgerDatabase.open(url); LedgerDatabase dbB = LedgerDatabase.open(url)) {
            ApiKeyStore keysA = new ApiKeyStore(dbA, Clock.systemUTC());
            JdbcLedger b = new JdbcLedger(dbB, new ApiKeyStore(dbB, Clock.systemUTC()), "tracker-b");
            ApiKeyStore.NewKey k = keysA.add("acme", null);
            assertThat(b.authenticate(k.key())).isPresent();
            assertThat(keysA.revoke(k.keyId())).isTrue();
            assertThat(b.authenticate(k.key())).isEmpty();
            assertThat(keysA.revoke(k.key())).as("revoking twice").isFalse();
            assertThat(keysA.list()).singleElement().satisfies(i -> assertThat(i.isRevoked()).isTrue());
            assertThatThrownBy(() -> keysA.revoke("ffffffffffff")).hasMessageContaining("no API key has the id");
        }
    }

    @ParameterizedTest
    @EnumSource(Kind.class)
    void settlingBillsTheNodesExactTokensReleasesTheRestAndIsIdempotent(Kind kind) throws Exception {
        try (LedgerDatabase db = DBS.open(kind); JdbcLedger ledger = ledger(db)) {
            ApiKeyStore keys = new ApiKeyStore(db, Clock.systemUTC());
            ApiKeyStore.NewKey k = keys.add("acme", 1000L);
            KeyHolder h = ledger.authenticate(k.key()).orElseThrow();
            ledger.reserve(start("r1", h, 600));
            assertThat(keys.list().getFirst().reservedTokens()).isEqualTo(600);
            assertThatThrownBy(() -> ledger.reserve(start("r2", h, 401)))
                    .isInstanceOf(BudgetExceededException.class)
                    .hasMessageContaining("up to 401 tokens").hasMessageContaining("400 of its 1000-token budget left");
            ledger.firstToken("r1", T0.plusMillis(150));
            ledger.settle(settlement("r1", 37, 120, Outcome.CUT));
            ledger.settle(settlement("r1", 99, 999, Outcome.STOP));   // a second settlement changes nothing
            ApiKeyStore.KeyInfo info = keys.list().getFirst();
            assertThat(info.spentTokens()).isEqualTo(157);
            assertThat(info.reservedTokens()).isZero();
            ledger.reserve(start("r2", h, 843));                        // exactly what is left fits
            assertThatThrownBy(() -> ledger.reserve(start("r3", h, 1))).isInstanceOf(BudgetExceededException.class);
        }
    }

    @ParameterizedTest
    @EnumSource(Kind.class)
    void aRetryWithTheSameKeyAndBodyGetsTheFirstResultAndAnotherBodyIsRefused(Kind kind) throws Exception {
        try (LedgerDatabase db = DBS.open(kind); JdbcLedger ledger = ledger(db)) {
            assertThat(ledger.replay("idem-1", "sha-idem-1")).isEmpty();
            ledger.reserve(start("idem-1", null, 50));
            assertThatThrownBy(() -> ledger.replay("idem-1", "sha-idem-1"))
                    .isInstanceOf(IdempotencyConflictException.class).hasMessageContaining("still in progress");
            assertThatThrownBy(() -> ledger.reserve(start("idem-1", null, 50)))
                    .isInstanceOf(IdempotencyConflictException.class);
            ledger.settle(settlement("idem-1", 5, 6, Outcome.STOP));
            assertThat(ledger.replay("idem-1", "sha-idem-1"))
                    .contains(new StoredResult("idem-1", 200, "{\"id\":\"idem-1\"}"));
            assertThatThrownBy(() -> ledger.replay("idem-1", "sha-other"))
                    .isInstanceOf(IdempotencyConflictException.class).hasMessageContaining("different request body");
        }
    }

    @ParameterizedTest
    @EnumSource(Kind.class)
    void everyRowCarriesEveryFieldAndUsageSumsSettledRowsPerTenantAndModel(Kind kind) throws Exception {
        try (LedgerDatabase db = DBS.open(kind); JdbcLedger ledger = ledger(db)) {
            ApiKeyStore keys = new ApiKeyStore(db, Clock.systemUTC());
            KeyHolder h = ledger.authenticate(keys.add("acme", null).key()).orElseThrow();
            ledger.reserve(new RequestStart("a", h, "m1", 100, "x", T0));
            ledger.reserve(new RequestStart("b", h, "m2", 100, "y", T0.plusSeconds(3600)));
            ledger.reserve(new RequestStart("c", h, "m1", 100, "z", T0.plusSeconds(7200)));
            ledger.firstToken("a", T0.plusMillis(40));
            ledger.settle(new Settlement("a", "rcp", List.of("n1", "n2"), 10, 4, 20, 18, 7, Outcome.LENGTH, 200, null,
                    T0.plusSeconds(1)));
            ledger.settle(settlement("b", 3, 5, Outcome.CANCELLED));

            LedgerReports reports = new LedgerReports(db);
            LedgerReports.Usage all = reports.usage("acme", null, null);
            assertThat(all.toJson().toString()).isEqualTo("{\"tenant\":\"acme\",\"requests\":2,\"prompt_tokens\":13,"
                    + "\"completion_tokens\":25,\"models\":{\"m1\":{\"requests\":1,\"prompt_tokens\":10,"
                    + "\"completion_tokens\":20},\"m2\":{\"requests\":1,\"prompt_tokens\":3,\"completion_tokens\":5}}}");
            assertThat(reports.usage("acme", T0.plusSeconds(60), null).total())
                    .isEqualTo(new LedgerReports.Totals(1, 3, 5));
            assertThat(reports.usage("nobody", null, null).total().requests()).isZero();
            assertThat(reports.tenants(null, null)).containsExactly("acme");

            StringWriter csv = new StringWriter();
            assertThat(reports.export(csv, LedgerReports.Format.CSV, "acme", null, null)).isEqualTo(3);
            String[] lines = csv.toString().split("\n");
            assertThat(lines[0]).isEqualTo(String.join(",", LedgerReports.COLUMNS));
            assertThat(lines[1]).isEqualTo("a," + h.keyId() + ",acme,m1,settled,tracker-a,100,rcp,\"n1,n2\",10,4,20,18,7,"
                    + "LENGTH,200,2026-12-01T10:00:00Z,2026-12-01T10:00:00.040Z,2026-12-01T10:00:01Z");
            assertThat(lines[3]).startsWith("c,").contains(",open,");
            StringWriter json = new StringWriter();
            reports.export(json, LedgerReports.Format.JSON, null, null, T0.plusSeconds(1));
            assertThat(json.toString()).contains("\"request_id\":\"a\"").contains("\"recomputed_tokens\":7")
                    .contains("\"first_token\":\"2026-12-01T10:00:00.040Z\"").doesNotContain("\"b\"");
        }
    }

    @ParameterizedTest
    @EnumSource(Kind.class)
    void recoveryListsOnlyThisTrackersOpenReservations(Kind kind) throws Exception {
        String url = DBS.newUrl(kind);
        try (LedgerDatabase db = LedgerDatabase.open(url)) {
            JdbcLedger a = ledger(db);
            JdbcLedger b = new JdbcLedger(db, new ApiKeyStore(db, Clock.systemUTC()), "tracker-b");
            a.reserve(start("a1", null, 1));
            a.reserve(start("a2", null, 1));
            b.reserve(start("b1", null, 1));
            a.settle(settlement("a1", 1, 0, Outcome.STOP));
            List<String> open = new ArrayList<>();
            for (JdbcLedger.OpenRequest r : a.openRequests()) open.add(r.requestId());
            assertThat(open).containsExactly("a2");
            assertThat(b.openRequests()).extracting(JdbcLedger.OpenRequest::requestId).containsExactly("b1");
        }
    }

}
