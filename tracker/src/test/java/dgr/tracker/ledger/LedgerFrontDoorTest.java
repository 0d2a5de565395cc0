package dgr.tracker.ledger;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dgr.tracker.cluster.Cluster;
import dgr.tracker.ledger.LedgerDatabase.Kind;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The ledger behind the tracker's front door, with real nodes, on SQLite and on a real PostgreSQL: keys
 * (401), budgets (429, never overshot, also across two trackers on one database), idempotent retries (422
 * for another body), a settled row committed before the client reads its usage, a cut stream billed at the
 * node's accounting, and {@code GET /v1/usage}.
 */
class LedgerFrontDoorTest {
    @RegisterExtension
    static final TestDatabases DBS = new TestDatabases();
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    private static JdbcLedger ledger(LedgerDatabase db, String trackerId) {
        return new JdbcLedger(db, new ApiKeyStore(db, Clock.systemUTC()), trackerId);
    }

    private static String completion(int maxTokens, boolean stream) {
        return "{\"model\":\"llama-tiny\",\"prompt\":\"Once upon a time\",\"max_tokens\":" + maxTokens
                + ",\"temperature\":0,\"ignore_eos\":true" + (stream ? ",\"stream\":true,\"stream_options\":{\"include_usage\":true}" : "")
                + "}";
    }

    private static HttpResponse<String> post(Cluster c, String body, String... headers) {
        return c.post(c.trackerUrl(), "v1/completions", body, headers);
    }

    private static Object[] row(LedgerDatabase db, String requestId) throws Exception {
        try (Connection c = db.dataSource().getConnection();
             PreparedStatement ps = c.prepareStatement("SELECT state, prompt_tokens, generated_tokens, delivered_tokens, "
                     + "outcome, nodes FROM requests WHERE request_id = ?")) {
            ps.setString(1, requestId);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) return null;
                return new Object[] {rs.getString(1), rs.getLong(2), rs.getLong(3), rs.getLong(4), rs.getString(5), rs.getString(6)};
            }
        }
    }

    @ParameterizedTest
    @EnumSource(Kind.class)
    void keysBudgetsAndIdempotentRetriesAtTheFrontDoor(Kind kind) throws Exception {
        try (LedgerDatabase db = DBS.open(kind); Cluster c = new Cluster(Cluster.config(), ledger(db, "t1"))) {
            c.join(Cluster.node("n1", 4));
            assertThat(post(c, completion(3, false)).statusCode()).as("no keys yet: open").isEqualTo(200);

            ApiKeyStore keys = new ApiKeyStore(db, Clock.systemUTC());
            String key = keys.add("acme", 200L).key();
            HttpResponse<String> none = post(c, completion(3, false));
            assertThat(none.statusCode()).isEqualTo(401);
            assertThat(c.json(none.body()).path("error").path("message").asText()).contains("didn't provide an API key");
            assertThat(post(c, completion(3, false), "Authorization", "Bearer " + key + "x").statusCode()).isEqualTo(401);

            HttpResponse<String> ok = post(c, completion(5, false), "Authorization", "Bearer " + key,
                    "Idempotency-Key", "idem-1");
            assertThat(ok.statusCode()).isEqualTo(200);
            HttpResponse<String> again = post(c, completion(5, false), "Authorization", "Bearer " + key,
                    "Idempotency-Key", "idem-1");
            assertThat(again.body()).isEqualTo(ok.body());
            assertThat(again.headers().firstValue("Idempotent-Replayed")).contains("true");
            HttpResponse<String> other = post(c, completion(6, false), "Authorization", "Bearer " + key,
                    "Idempotency-Key", "idem-1");
            assertThat(other.statusCode()).isEqualTo(422);
            assertThat(other.body()).contains("different request body");

            JsonNode usage = c.json(ok.body()).get("usage");
            Object[] r = row(db, "idem-1");
            assertThat(r[0]).isEqualTo("settled");
            assertThat(r[1]).isEqualTo(usage.get("prompt_tokens").asLong());
            assertThat(r[2]).isEqualTo(usage.get("completion_tokens").asLong());
            assertThat(r[5]).isEqualTo("n1");

            HttpResponse<String> over = post(c, completion(500, false), "Authorization", "Bearer " + key);
            assertThat(over.statusCode()).isEqualTo(429);
            assertThat(c.json(over.body()).path("error").path("message").asText()).contains("budget");

            HttpResponse<String> u = c.get(c.trackerUrl(), "v1/usage?tenant=acme", "Authorization", "Bearer " + Cluster.ADMIN_TOKEN);
            assertThat(u.statusCode()).as(u.body()).isEqualTo(200);
            assertThat(c.json(u.body()).toString()).isEqualTo(new LedgerReports(db).usage("acme", null, null).toJson().toString());
            assertThat(c.json(u.body()).path("requests").asInt()).isEqualTo(1);
            assertThat(c.get(c.trackerUrl(), "v1/usage?tenant=acme").statusCode()).isEqualTo(401);
            assertThat(c.get(c.trackerUrl(), "v1/usage", "Authorization", "Bearer " + Cluster.ADMIN_TOKEN).statusCode())
                    .isEqualTo(400);

            keys.revoke(key);
            assertThat(post(c, completion(3, false), "Authorization", "Bearer " + key).statusCode())
                    .as("revoked: refused at once").isEqualTo(401);
        }
    }

    @ParameterizedTest
    @EnumSource(Kind.class)
    void aSmallBudgetIsHeldToTheExactPromptCountNotItsBytes(Kind kind) throws Exception {
        try (LedgerDatabase db = DBS.open(kind); Cluster c = new Cluster(Cluster.config(), ledger(db, "t1"))) {
            c.join(Cluster.node("n1", 4));
            String prompt = "The quick brown fox jumps over the lazy dog";   // 43 bytes, far fewer tokens
            String key = new ApiKeyStore(db, Clock.systemUTC()).add("small", 45L).key();
            String body = "{\"model\":\"llama-tiny\",\"prompt\":\"" + prompt + "\",\"max_tokens\":4,\"temperature\":0,"
                    + "\"ignore_eos\":true}";
            HttpResponse<String> ok = post(c, body, "Authorization", "Bearer " + key, "Idempotency-Key", "small-1");
            assertThat(ok.statusCode()).as("43 bytes + 4 > 45, but the exact count fits: " + ok.body()).isEqualTo(200);
            long promptTokens = c.json(ok.body()).path("usage").path("prompt_tokens").asLong();
            assertThat(promptTokens).isLessThan(41);
            try (Connection conn = db.dataSource().getConnection();
                 PreparedStatement ps = conn.prepareStatement("SELECT reserved_tokens FROM requests WHERE request_id = ?")) {
                ps.setString(1, "small-1");
                try (ResultSet rs = ps.executeQuery()) {
                    assertThat(rs.next()).isTrue();
                    assertThat(rs.getLong(1)).as("held: the exact prompt + max_tokens").isEqualTo(promptTokens + 4);
                }
            }
            // What is left cannot hold the exact prompt + 30: refused, naming the exact figure, never overshot.
            HttpResponse<String> over = post(c, body.replace("\"max_tokens\":4", "\"max_tokens\":30"), "Authorization", "Bearer " + key);
            assertThat(over.statusCode()).isEqualTo(429);
            assertThat(c.json(over.body()).path("error").path("message").asText()).contains("up to " + (promptTokens + 30) + " tokens");
            ApiKeyStore.KeyInfo info = new ApiKeyStore(db, Clock.systemUTC()).list().getFirst();
            assertThat(info.spentTokens()).isEqualTo(promptTokens + 4).isLessThanOrEqualTo(45);
            assertThat(info.reservedTokens()).isZero();
        }
    }

    @ParameterizedTest
    @EnumSource(Kind.class)
    void theSettledRowIsCommittedBeforeTheClientReadsItsUsageAndACutStreamIsBilledAtTheNodesCount(Kind kind)
            throws Exception {
        try (LedgerDatabase db = DBS.open(kind); Cluster c = new Cluster(Cluster.config(), ledger(db, "t1"))) {
            c.join(Cluster.node("n1", 4));
            HttpRequest req = HttpRequest.newBuilder(c.trackerUrl().resolve("v1/completions")).timeout(Duration.ofSeconds(60))
                    .header("Content-Type", "application/json").header("Idempotency-Key", "streamed-1")
                    .POST(HttpRequest.BodyPublishers.ofString(completion(12, true))).build();
            HttpResponse<InputStream> r = HTTP.send(req, HttpResponse.BodyHandlers.ofInputStream());
            boolean sawUsage = false;
            try (BufferedReader lines = new BufferedReader(new InputStreamReader(r.body(), StandardCharsets.UTF_8))) {
                for (String line; (line = lines.readLine()) != null; ) {
                    if (!line.startsWith("data: {")) continue;
                    JsonNode chunk = c.json(line.substring(6));
                    if (chunk.hasNonNull("usage")) {
                        // The client holds its usage: the row must already be committed, with that usage.
                        Object[] row = row(db, "streamed-1");
                        assertThat(row[0]).isEqualTo("settled");
                        assertThat(row[2]).isEqualTo(chunk.get("usage").get("completion_tokens").asLong());
                        sawUsage = true;
                    }
                }
            }
            assertThat(sawUsage).isTrue();

            HttpRequest cut = HttpRequest.newBuilder(c.trackerUrl().resolve("v1/completions")).timeout(Duration.ofSeconds(60))
                    .header("Content-Type", "application/json").header("Idempotency-Key", "cut-1")
                    .POST(HttpRequest.BodyPublishers.ofString(completion(400, true))).build();
            HttpResponse<InputStream> cr = HTTP.send(cut, HttpResponse.BodyHandlers.ofInputStream());
            int read = 0;
            try (InputStream in = cr.body()) {
                BufferedReader lines = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
                for (String line; read < 3 && (line = lines.readLine()) != null; ) if (line.startsWith("data: {")) read++;
            }
            Object[] row = null;
            long deadline = System.nanoTime() + 30_000_000_000L;
            while (System.nanoTime() < deadline) {
                row = row(db, "cut-1");
                if (row != null && row[0].equals("settled")) break;
                Thread.sleep(20);
            }
            assertThat(row[0]).isEqualTo("settled");
            // Cut, unless the tiny model had finished and the relay had written everything into the socket's
            // buffers before the close was noticed; either way the row holds what the node computed.
            assertThat(row[4]).isIn("CUT", "LENGTH");
            assertThat((Long) row[3]).isGreaterThanOrEqualTo(read);
            HttpResponse<String> acc = c.post(Cluster.nodeUrl(c.nodes.getFirst()), "v1/accounting",
                    "{\"request_ids\":[\"cut-1\"]}", "Authorization", "Bearer " + Cluster.NODE_TOKEN);
            JsonNode rec = c.json(acc.body()).path("requests").path(0);
            long awaitNode = System.nanoTime() + 30_000_000_000L;
            while (rec.path("finish_reason").isNull() && System.nanoTime() < awaitNode) {
                Thread.sleep(20);
                rec = c.json(c.post(Cluster.nodeUrl(c.nodes.getFirst()), "v1/accounting", "{\"request_ids\":[\"cut-1\"]}",
                        "Authorization", "Bearer " + Cluster.NODE_TOKEN).body()).path("requests").path(0);
            }
            assertThat(row[1]).isEqualTo(rec.get("prompt_tokens").asLong());
            assertThat(row[2]).as("billed at what the node computed").isEqualTo(rec.get("generated_tokens").asLong());
            // A cut the node saw in time stopped it short of max_tokens; the tiny model may also have computed all
            // 400 before the close reached it (its chunks fit the sockets' buffers), and then 400 is what is billed.
            if (row[4].equals("CUT") && !rec.path("finish_reason").asText().equals("length")) {
                assertThat((Long) row[2]).isLessThan(400);
            }
        }
    }

    @ParameterizedTest
    @EnumSource(Kind.class)
    void twoTrackersOnOneDatabaseNeverOvershootABudget(Kind kind) throws Exception {
        String url = DBS.newUrl(kind);
        try (LedgerDatabase dbA = LedgerDatabase.open(url); LedgerDatabase dbB = LedgerDatabase.open(url);
             Cluster a = new Cluster(Cluster.config(), ledger(dbA, "ta"));
             Cluster b = new Cluster(Cluster.config(), ledger(dbB, "tb"))) {
            a.join(Cluster.node("na", 8));
            b.join(Cluster.node("nb", 8));
            long budget = 400;
            String key = new ApiKeyStore(dbA, Clock.systemUTC()).add("acme", budget).key();
            List<Integer> statuses = new ArrayList<>();
            try (ExecutorService pool = Executors.newFixedThreadPool(16)) {
                List<Future<Integer>> fs = new ArrayList<>();
                for (int i = 0; i < 16; i++) {
                    Cluster via = i % 2 == 0 ? a : b;
                    fs.add(pool.submit(() -> post(via, completion(30, false), "Authorization", "Bearer " + key).statusCode()));
                }
                for (Future<Integer> f : fs) statuses.add(f.get());
            }
            ApiKeyStore.KeyInfo info = new ApiKeyStore(dbA, Clock.systemUTC()).list().getFirst();
            assertThat(statuses).contains(200, 429).containsOnly(200, 429);
            assertThat(info.reservedTokens()).isZero();
            assertThat(info.spentTokens()).isLessThanOrEqualTo(budget);
            LedgerReports.Totals t = new LedgerReports(dbA).usage("acme", null, null).total();
            assertThat(t.promptTokens() + t.completionTokens()).isEqualTo(info.spentTokens());
            assertThat(t.requests()).isEqualTo(statuses.stream().filter(s -> s == 200).count());
        }
    }

}
