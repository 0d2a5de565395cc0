package dgr.tracker.ledger;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dgr.engine.EngineOptions;
import dgr.gguf.synth.QuantMix;
import dgr.gguf.synth.Synth;
import dgr.gguf.synth.SynthPreset;
import dgr.node.ModelSpec;
import dgr.node.NodeConfig;
import dgr.node.NodeServer;
import dgr.runtime.SchedulerConfig;
import dgr.tracker.ledger.LedgerDatabase.Kind;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.StringWriter;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A tracker died with requests in flight: its open rows are settled from a real node's accounting (a whole
 * answer, a stream cut when the tracker's connection went), the node's numbers exactly, the reservation
 * released; a row no node knows is settled FAILED at zero only once recovery gives up.
 */
class LedgerRecoveryTest {
    @RegisterExtension
    static final TestDatabases DBS = new TestDatabases();
    private static final String TOKEN = "node-secret";
    private static final ObjectMapper JSON = new ObjectMapper();
    private static NodeServer node;

    @BeforeAll
    static void startNode() throws Exception {
        Path dir = Files.createTempDirectory("dgr-ledger-recovery");
        Path model = dir.resolve("llama-tiny-Q4_0.gguf");
        Synth.write(SynthPreset.LLAMA_TINY, QuantMix.parse("Q4_0"), 42, model);
        model.toFile().deleteOnExit();
        dir.toFile().deleteOnExit();
        node = NodeServer.start(NodeConfig.of(List.of(new ModelSpec(model, "llama-tiny"))).withAddress("127.0.0.1", 0)
                .withNodeId("node-a").withEngine(EngineOptions.defaults().withThreads(1))
                .withScheduler(SchedulerConfig.defaults().withBatch(16, 64)).withNodeToken(TOKEN));
    }

    @AfterAll
    static void stopNode() { node.close(); }

    @ParameterizedTest
    @EnumSource(Kind.class)
    void openReservationsSettleAtTheNodesExactAccountingAfterATrackerCrash(Kind kind) throws Exception {
        String tag = kind.name().toLowerCase();
        try (LedgerDatabase db = DBS.open(kind)) {
            ApiKeyStore keys = new ApiKeyStore(db, Clock.systemUTC());
            JdbcLedger dead = new JdbcLedger(db, keys, "tracker-1");
            KeyHolder h = dead.authenticate(keys.add("acme", 10_000L).key()).orElseThrow();
            String whole = "whole-" + tag, cut = "cut-" + tag, lost = "lost-" + tag;
            for (String id : List.of(whole, cut, lost)) {
                dead.reserve(new RequestStart(id, h, "llama-tiny", 500, "sha", Instant.now().minusSeconds(5)));
            }
            // What the dead tracker had sent on: a whole answer, and a stream whose reader went away after 3 chunks.
            HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + node.port() + "/v1/completions"))
                    .header("Content-Type", "application/json").header("X-Dgr-Request-Id", whole)
                    .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"llama-tiny\",\"prompt\":\"Hello world\","
                            + "\"max_tokens\":9,\"temperature\":0}")).build(), HttpResponse.BodyHandlers.ofString());
            JsonNode usage = JSON.readTree(r.body()).get("usage");
            cutStream(cut);

            // The restarted tracker (same id) recovers; until the cut stream's session ends it stays open.
            JdbcLedger restarted = new JdbcLedger(db, keys, "tracker-1");
            LedgerRecovery recovery = new LedgerRecovery(restarted, () -> List.of(
                    new LedgerRecovery.NodeEndpoint("node-a", "http://127.0.0.1:" + node.port(), TOKEN)), Instant.now());
            long deadline = System.nanoTime() + 30_000_000_000L;
            LedgerRecovery.Result res = recovery.pass(false);
            int fromNodes = res.settledFromNodes();
            while (fromNodes < 2 && System.nanoTime() < deadline) {
                Thread.sleep(20);
                fromNodes += recovery.pass(false).settledFromNodes();
            }
            assertThat(fromNodes).isEqualTo(2);
            assertThat(restarted.openRequests()).extracting(JdbcLedger.OpenRequest::requestId).containsExactly(lost);
            assertThat(recovery.pass(true).settledUnknown()).isEqualTo(1);
            assertThat(restarted.openRequests()).isEmpty();

            StringWriter csv = new StringWriter();
            new LedgerReports(db).export(csv, LedgerReports.Format.CSV, "acme", null, null);
            String rows = csv.toString();
            // request_id,key_id,tenant,model,state,tracker,reserved,recipe,nodes,prompt,cached,generated,delivered,recomputed,outcome
            assertThat(rows).containsPattern(whole + ",[0-9a-f]+,acme,llama-tiny,settled,tracker-1,500,,node-a,"
                    + usage.get("prompt_tokens").asInt() + ",0," + usage.get("completion_tokens").asInt() + ","
                    + usage.get("completion_tokens").asInt() + ",0,(STOP|LENGTH),");
            assertThat(rows).containsPattern(cut + ",[0-9a-f]+,acme,llama-tiny,settled,tracker-1,500,,node-a,\\d+,0,\\d+,\\d+,0,CUT,");
            assertThat(rows).containsPattern(lost + ",[0-9a-f]+,acme,llama-tiny,settled,tracker-1,500,,,0,0,0,0,0,FAILED,");
            JsonNode cutRecord = nodeRecord(cut);
            ApiKeyStore.KeyInfo info = keys.list().getFirst();
            assertThat(info.reservedTokens()).isZero();
            assertThat(info.spentTokens()).isEqualTo(usage.get("prompt_tokens").asLong()
                    + usage.get("completion_tokens").asLong() + cutRecord.get("prompt_tokens").asLong()
                    + cutRecord.get("generated_tokens").asLong());
        }
    }

    @ParameterizedTest
    @EnumSource(Kind.class)
    void anIdNoNodeKnowsStaysOpenWhileSomeNodeIsSilentAndIsSettledAtZeroOnceAllAnswer(Kind kind) throws Exception {
        try (LedgerDatabase db = DBS.open(kind)) {
            ApiKeyStore keys = new ApiKeyStore(db, Clock.systemUTC());
            JdbcLedger dead = new JdbcLedger(db, keys, "tracker-2");
            KeyHolder h = dead.authenticate(keys.add("acme", 10_000L).key()).orElseThrow();
            dead.reserve(new RequestStart("unknown-" + kind, h, "llama-tiny", 500, "sha", Instant.now().minusSeconds(5)));
            JdbcLedger restarted = new JdbcLedger(db, keys, "tracker-2");
            int silentPort;
            try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
                silentPort = s.getLocalPort();   // closed again: nothing answers there (a node restarting)
            }
            LedgerRecovery.NodeEndpoint live = new LedgerRecovery.NodeEndpoint("node-a", "http://127.0.0.1:" + node.port(), TOKEN);
            LedgerRecovery.NodeEndpoint silent = new LedgerRecovery.NodeEndpoint("node-b", "http://127.0.0.1:" + silentPort, TOKEN);
            List<LedgerRecovery.NodeEndpoint> asked = new java.util.ArrayList<>(List.of(live, silent));
            LedgerRecovery recovery = new LedgerRecovery(restarted, () -> List.copyOf(asked), Instant.now());

            LedgerRecovery.Result whileSilent = recovery.pass(false, true);
            assertThat(whileSilent.allAnswered()).isFalse();
            assertThat(whileSilent.stillOpen()).isEqualTo(1);
            assertThat(restarted.openRequests()).hasSize(1);

            asked.remove(silent);   // it answers now (here: it is no longer asked) and knows nothing either
            LedgerRecovery.Result allAnswered = recovery.pass(false, true);
            assertThat(allAnswered.allAnswered()).isTrue();
            assertThat(allAnswered.settledUnknown()).isEqualTo(1);
            assertThat(restarted.openRequests()).isEmpty();
            ApiKeyStore.KeyInfo info = keys.list().getFirst();
            assertThat(info.reservedTokens()).isZero();
            assertThat(info.spentTokens()).isZero();
        }
    }

    private static void cutStream(String requestId) throws Exception {
        byte[] body = ("{\"model\":\"llama-tiny\",\"prompt\":\"The quick brown fox\",\"max_tokens\":300,"
                + "\"temperature\":0,\"stream\":true}").getBytes(StandardCharsets.UTF_8);
        try (Socket s = new Socket("127.0.0.1", node.port())) {
            OutputStream out = s.getOutputStream();
            out.write(("POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-Dgr-Request-Id: "
                    + requestId + "\r\nContent-Length: " + body.length + "\r\nConnection: close\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            out.write(body);
            out.flush();
            BufferedReader in = new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.UTF_8));
            int chunks = 0;
            for (String line; chunks < 3 && (line = in.readLine()) != null; ) if (line.startsWith("data: {")) chunks++;
        }
    }

    private static JsonNode nodeRecord(String id) throws Exception {
        HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + node.port() + "/v1/accounting")).timeout(Duration.ofSeconds(10))
                .header("Authorization", "Bearer " + TOKEN).POST(HttpRequest.BodyPublishers.ofString(
                        "{\"request_ids\":[\"" + id + "\"]}")).build(), HttpResponse.BodyHandlers.ofString());
        return JSON.readTree(r.body()).get("requests").get(0);
    }
}
