package dgr.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dgr.cli.process.DgrProcess;
import dgr.tracker.ledger.ApiKeyStore;
import dgr.tracker.ledger.LedgerDatabase;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * The ledger's chaos check (issue 25): real {@code dgr tracker} and two {@code dgr serve} processes, N requests
 * (streams and not; some read to the end, some cancelled by the client after a few chunks, some given a deadline)
 * while the tracker and the nodes are {@code kill -9}ed at random moments and restarted, then the ledger checked
 * against ground truth: what each client received and what each surviving node's accounting says.
 *
 * <p>Ground truth per request: a request whose client got its answer (a 200 answer, or a stream to its
 * finish and usage chunk) must be billed exactly that usage, its completion equal to the tokens the client
 * counted; any request must be billed at least the tokens its client received; a request a surviving node
 * served alone must be billed exactly what that node computed; the prompt of every billed request equals the
 * prompt's token count. Reported: rows lost (a client got tokens, no settled row), rows double-counted
 * (billed above the truth), rows with tokens off (any difference), and the total of tokens off. Goal: all 0.
 *
 * <p>Run (about 2-4 minutes): {@code tools/ledger-chaos} or
 * {@code mvn -B -q -pl cli -am verify -Dtest=LedgerChaosCheck -Dsurefire.failIfNoSpecifiedTests=false -Ddgr.chaos=true
 * [-Ddgr.chaos.requests=1000] [-Ddgr.chaos.seed=1] [-Ddgr.chaos.db=jdbc:postgresql://...]}. The report is also written to
 * {@code cli/target/ledger-chaos/report.json} with every process's log beside it.
 */
@EnabledIfSystemProperty(named = "dgr.chaos", matches = "true")
class LedgerChaosCheck {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String NODE_TOKEN = "chaos-node-token";
    private static final String ADMIN_TOKEN = "chaos-admin";
    private static final String[] PROMPTS = {"The quick brown fox", "Once upon a time", "Hello world", "In the beginning",
            "A B C D E F", "lazy dog jumps over"};
    private static final int CONCURRENCY = 8;
    /** Generous: on a loaded machine a JVM with a model can take a minute to answer /health. */
    private static final Duration READY = Duration.ofSeconds(240);
    /** Streams that have received a chunk and not ended: a node is killed only while some are, so resumes happen. */
    private final AtomicInteger midStream = new AtomicInteger();

    enum Mode { FULL, CANCEL, DEADLINE }

    /** What one client saw. */
    record Seen(String id, int prompt, boolean stream, Mode mode, int maxTokens, int status, boolean complete,
                int receivedTokens, long usagePrompt, long usageCompletion, String error) {}

    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(2)).build();

    @Test
    void theLedgerMatchesGroundTruthThroughKill9OfTrackerAndNodes() throws Exception {
        int requests = Integer.getInteger("dgr.chaos.requests", 1000);
        long seed = Long.getLong("dgr.chaos.seed", 1);
        Path dir = Path.of(System.getProperty("dgr.repo.root", "."), "cli", "target", "ledger-chaos");
        if (Files.exists(dir)) try (var files = Files.walk(dir)) {
            files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
        Files.createDirectories(dir);
        // SQLite by default; -Ddgr.chaos.db=jdbc:postgresql://... runs the same check on an (empty) PostgreSQL database.
        String db = System.getProperty("dgr.chaos.db", LedgerDatabase.sqliteUrl(dir.resolve("ledger.db")));
        String key;
        try (LedgerDatabase d = LedgerDatabase.open(db)) {
            key = new ApiKeyStore(d, Clock.systemUTC()).add("chaos", null).key();
        }
        int trackerPort = DgrProcess.freePort();
        int[] nodePorts = {DgrProcess.freePort(), DgrProcess.freePort()};
        String tracker = "http://127.0.0.1:" + trackerPort;
        AtomicInteger generation = new AtomicInteger();
        Procs procs = new Procs();
        try {
            procs.tracker = startTracker(dir, trackerPort, db, generation.incrementAndGet());
            for (int i = 0; i < 2; i++) procs.nodes[i] = startNode(dir, i, nodePorts[i], tracker, generation.incrementAndGet());
            awaitNodesUp(tracker, 2);

            Map<String, Seen> seen = new ConcurrentHashMap<>();
            AtomicBoolean clientsDone = new AtomicBoolean();
            List<String> events = java.util.Collections.synchronizedList(new ArrayList<>());
            Thread chaos = Thread.ofPlatform().name("chaos").start(() -> {
                SplittableRandom rnd = new SplittableRandom(seed * 31 + 7);
                try {
                    while (!clientsDone.get()) {
                        Thread.sleep(800 + rnd.nextInt(2000));
                        if (clientsDone.get()) break;
                        int victim = rnd.nextInt(10);
                        if (victim < 4) {
                            events.add("kill -9 tracker");
                            procs.tracker.kill9();
                            Thread.sleep(200 + rnd.nextInt(800));
                            procs.tracker = startTracker(dir, trackerPort, db, generation.incrementAndGet());
                        } else {
                            int n = victim < 7 ? 0 : 1;
                            long until = System.nanoTime() + 5_000_000_000L;
                            while (midStream.get() < 2 && System.nanoTime() < until) Thread.sleep(5);
                            events.add("kill -9 node " + n + " (" + midStream.get() + " streams mid-way)");
                            procs.nodes[n].kill9();
                            Thread.sleep(200 + rnd.nextInt(800));
                            procs.nodes[n] = startNode(dir, n, nodePorts[n], tracker, generation.incrementAndGet());
                        }
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } catch (RuntimeException e) {
                    events.add("chaos thread failed: " + e.getMessage().lines().findFirst().orElse(""));
                }
            });

            AtomicInteger next = new AtomicInteger();
            try (ExecutorService clients = Executors.newFixedThreadPool(CONCURRENCY)) {
                List<Future<?>> fs = new ArrayList<>();
                for (int c = 0; c < CONCURRENCY; c++) {
                    fs.add(clients.submit(() -> {
                        for (int i; (i = next.getAndIncrement()) < requests; ) {
                            Seen s = request(tracker, key, seed, i);
                            seen.put(s.id(), s);
                        }
                        return null;
                    }));
                }
                for (Future<?> f : fs) f.get();
            }
            clientsDone.set(true);
            chaos.join();

            // Everything up again; the tracker settles what it left open from the nodes' accounting.
            if (!procs.tracker.isAlive()) procs.tracker = startTracker(dir, trackerPort, db, generation.incrementAndGet());
            for (int i = 0; i < 2; i++) {
                if (!procs.nodes[i].isAlive()) procs.nodes[i] = startNode(dir, i, nodePorts[i], tracker, generation.incrementAndGet());
            }
            Map<String, Row> rows = awaitNoOpenRows(db, Duration.ofSeconds(90));
            Map<String, List<JsonNode>> nodeRecords = new HashMap<>();
            for (int i = 0; i < 2; i++) {
                for (JsonNode r : accounting(nodePorts[i], new ArrayList<>(seen.keySet()))) {
                    nodeRecords.computeIfAbsent(r.get("request_id").asText(), k -> new ArrayList<>()).add(r);
                }
            }
            ObjectNode report = check(seen, rows, nodeRecords, events);
            Files.writeString(dir.resolve("report.json"), report.toPrettyString());
            System.out.println("ledger chaos check: " + report.toPrettyString());
            assertThat(report.get("rows_lost").asInt()).as(report.toPrettyString()).isZero();
            assertThat(report.get("rows_double_counted").asInt()).as(report.toPrettyString()).isZero();
            assertThat(report.get("tokens_off").asLong()).as(report.toPrettyString()).isZero();
            assertThat(report.get("rows_left_open").asInt()).isZero();
        } finally {
            procs.close();
        }
    }

    /** The processes, replaced as they are killed; closed by handle at the end. */
    private static final class Procs implements AutoCloseable {
        volatile DgrProcess tracker;
        final DgrProcess[] nodes = new DgrProcess[2];

        @Override
        public void close() {
            for (DgrProcess n : nodes) if (n != null) n.close();
            if (tracker != null) tracker.close();
        }
    }

    private static DgrProcess startTracker(Path dir, int port, String db, int gen) {
        return DgrProcess.start("tracker-" + gen, dir, List.of("tracker", "--port", Integer.toString(port),
                "--node-token", NODE_TOKEN, "--admin-token", ADMIN_TOKEN, "--db", db, "--tracker-id", "chaos"))
                .awaitHealthy("http://127.0.0.1:" + port, READY);
    }

    private static DgrProcess startNode(Path dir, int i, int port, String tracker, int gen) {
        return DgrProcess.start("node" + i + "-" + gen, dir, List.of("serve", "-m", DefaultModel.path().toString(), "-a", "llama-tiny",
                "--port", Integer.toString(port),
                "--tracker", tracker, "--node-token", NODE_TOKEN, "--threads", "1"))
                .awaitHealthy("http://127.0.0.1:" + port, READY);
    }

    private void awaitNodesUp(String tracker, int n) throws Exception {
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (System.nanoTime() < deadline) {
            try {
                HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(tracker + "/health")).build(),
                        HttpResponse.BodyHandlers.ofString());
                if (JSON.readTree(r.body()).path("nodes_up").asInt() >= n) return;
            } catch (IOException ignored) {
                // not up yet
            }
            Thread.sleep(50);
        }
        throw new AssertionError(n + " nodes did not join the tracker within 30 s");
    }

    /** One client request; never throws: whatever happened is in the record. */
    private Seen request(String tracker, String key, long seed, int i) {
        SplittableRandom rnd = new SplittableRandom(seed * 1_000_003 + i);
        String id = "chaos-" + seed + "-" + i;
        int prompt = rnd.nextInt(PROMPTS.length);
        boolean stream = rnd.nextInt(10) < 7;
        int m = rnd.nextInt(10);
        Mode mode = !stream ? (m < 8 ? Mode.FULL : Mode.DEADLINE) : m < 6 ? Mode.FULL : m < 8 ? Mode.CANCEL : Mode.DEADLINE;
        // Most short; some long, so that a node's kill -9 finds streams in the middle (resumed elsewhere).
        int maxTokens = rnd.nextInt(10) < 7 ? 4 + rnd.nextInt(60) : 100 + rnd.nextInt(250);
        int cancelAfter = 1 + rnd.nextInt(Math.max(1, maxTokens / 2));
        long deadlineMs = 20 + rnd.nextInt(400);
        String body = "{\"model\":\"llama-tiny\",\"prompt\":" + JSON.valueToTree(PROMPTS[prompt]) + ",\"max_tokens\":"
                + maxTokens + ",\"temperature\":0.8,\"seed\":" + (seed + i) + ",\"ignore_eos\":" + rnd.nextBoolean()
                + (stream ? ",\"stream\":true,\"stream_options\":{\"include_usage\":true}" : "") + "}";
        HttpRequest req = HttpRequest.newBuilder(URI.create(tracker + "/v1/completions"))
                .timeout(Duration.ofSeconds(60)).header("Content-Type", "application/json")
                .header("Authorization", "Bearer " + key).header("Idempotency-Key", id)
                .POST(HttpRequest.BodyPublishers.ofString(body)).build();
        long start = System.nanoTime();
        int received = 0;
        long up = -1, uc = -1;
        int status = -1;
        boolean complete = false;
        try {
            HttpResponse<InputStream> r = sendRetryingWhileDown(req);
            status = r.statusCode();
            try (InputStream in = r.body()) {
                if (status != 200) {
                    return new Seen(id, prompt, stream, mode, maxTokens, status, false, 0, -1, -1,
                            new String(in.readNBytes(4096), StandardCharsets.UTF_8));
                }
                if (!stream) {
                    if (mode == Mode.DEADLINE) {
                        // A whole answer with a deadline: give up if it has not come in time (the read blocks).
                        Thread.ofVirtual().start(() -> {
                            try {
                                Thread.sleep(deadlineMs);
                                in.close();
                            } catch (Exception ignored) {
                                // closed already
                            }
                        });
                    }
                    JsonNode answer = JSON.readTree(in.readAllBytes());
                    up = answer.path("usage").path("prompt_tokens").asLong(-1);
                    uc = answer.path("usage").path("completion_tokens").asLong(-1);
                    return new Seen(id, prompt, false, mode, maxTokens, status, up >= 0, (int) Math.max(0, uc), up, uc, null);
                }
                BufferedReader lines = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
                boolean finished = false;
                boolean counted = false;
                try {
                    for (String line; (line = lines.readLine()) != null; ) {
                        if (!line.startsWith("data: ")) continue;
                        if (line.equals("data: [DONE]")) {
                            complete = finished && up >= 0;
                            break;
                        }
                        JsonNode chunk = JSON.readTree(line.substring(6));
                        if (chunk.has("error")) break;
                        JsonNode choices = chunk.path("choices");
                        if (choices.size() > 0) {
                            if (choices.get(0).path("finish_reason").isNull()) received++;
                            else finished = true;
                        }
                        if (!counted && received > 0) {
                            counted = true;
                            midStream.incrementAndGet();
                        }
                        if (chunk.hasNonNull("usage")) {
                            up = chunk.get("usage").path("prompt_tokens").asLong();
                            uc = chunk.get("usage").path("completion_tokens").asLong();
                        }
                        if (mode == Mode.CANCEL && received >= cancelAfter) break;
                        if (mode == Mode.DEADLINE && System.nanoTime() - start > deadlineMs * 1_000_000) break;
                    }
                } finally {
                    if (counted) midStream.decrementAndGet();
                }
            }
            return new Seen(id, prompt, stream, mode, maxTokens, status, complete, received, up, uc, null);
        } catch (IOException e) {
            return new Seen(id, prompt, stream, mode, maxTokens, status, false, received, up, uc, e.toString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Seen(id, prompt, stream, mode, maxTokens, status, false, received, up, uc, "interrupted");
        }
    }

    /**
     * Sends, retrying (same Idempotency-Key) while the tracker cannot be reached at all, as a client would
     * through a tracker restart: the request never reached it, so it is still the first attempt.
     */
    private HttpResponse<InputStream> sendRetryingWhileDown(HttpRequest req) throws IOException, InterruptedException {
        for (int attempt = 0; ; attempt++) {
            try {
                return http.send(req, HttpResponse.BodyHandlers.ofInputStream());
            } catch (java.net.ConnectException | java.net.http.HttpConnectTimeoutException e) {
                if (attempt >= 300) throw e;
                Thread.sleep(50);
            }
        }
    }

    /** A settled (or open) ledger row, as the check needs it. */
    record Row(String id, String state, long prompt, long generated, long delivered, long recomputed, String outcome,
               String nodes) {}

    private static Map<String, Row> awaitNoOpenRows(String db, Duration timeout) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            Map<String, Row> rows = new HashMap<>();
            int open = 0;
            try (LedgerDatabase d = LedgerDatabase.open(db); Connection c = d.dataSource().getConnection();
                 Statement s = c.createStatement();
                 ResultSet rs = s.executeQuery("SELECT request_id, state, prompt_tokens, generated_tokens, delivered_tokens,"
                         + " recomputed_tokens, outcome, nodes FROM requests")) {
                while (rs.next()) {
                    Row r = new Row(rs.getString(1), rs.getString(2), rs.getLong(3), rs.getLong(4), rs.getLong(5),
                            rs.getLong(6), rs.getString(7), rs.getString(8));
                    rows.put(r.id(), r);
                    if (r.state().equals("open")) open++;
                }
            }
            if (open == 0 || System.nanoTime() > deadline) return rows;
            Thread.sleep(500);
        }
    }

    private List<JsonNode> accounting(int port, List<String> ids) throws Exception {
        List<JsonNode> out = new ArrayList<>();
        for (int i = 0; i < ids.size(); i += 1000) {
            ObjectNode body = JSON.createObjectNode();
            ids.subList(i, Math.min(ids.size(), i + 1000)).forEach(body.putArray("request_ids")::add);
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
                    + "/v1/accounting")).header("Authorization", "Bearer " + NODE_TOKEN)
                    .POST(HttpRequest.BodyPublishers.ofString(body.toString())).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            JSON.readTree(r.body()).path("requests").forEach(out::add);
        }
        return out;
    }

    private static ObjectNode check(Map<String, Seen> seen, Map<String, Row> rows, Map<String, List<JsonNode>> nodeRecords,
                                    List<String> events) {
        // The prompt's token count, from the answers clients completed (all must agree).
        Map<Integer, Long> promptTokens = new HashMap<>();
        int promptDisagreements = 0;
        for (Seen s : seen.values()) {
            if (!s.complete()) continue;
            Long before = promptTokens.putIfAbsent(s.prompt(), s.usagePrompt());
            if (before != null && before != s.usagePrompt()) promptDisagreements++;
        }
        int lost = 0, doubled = 0, off = 0, open = 0, complete = 0, cut = 0, refused = 0, verifiedByNode = 0;
        long tokensOff = 0;
        List<String> examples = new ArrayList<>();
        for (Seen s : seen.values()) {
            Row row = rows.get(s.id());
            boolean gotSomething = s.receivedTokens() > 0 || s.complete();
            if (s.complete()) complete++;
            else if (s.status() == 200) cut++;
            else refused++;
            if (row == null) {
                if (gotSomething) {
                    lost++;
                    example(examples, "lost", s, null);
                }
                continue;
            }
            if (row.state().equals("open")) {
                open++;
                if (gotSomething) lost++;
                continue;
            }
            long truthPrompt = -1, truthGenerated = -1;
            if (s.complete()) {
                truthPrompt = s.usagePrompt();
                truthGenerated = s.usageCompletion();
                if (s.stream() && s.receivedTokens() != s.usageCompletion()) {
                    off++;
                    tokensOff += Math.abs(s.receivedTokens() - s.usageCompletion());
                    example(examples, "stream's token chunks differ from its usage", s, row);
                }
            } else {
                List<JsonNode> recs = nodeRecords.getOrDefault(s.id(), List.of());
                if (recs.size() == 1 && !recs.getFirst().path("finish_reason").isNull()
                        && (row.nodes() == null || !row.nodes().contains(","))) {
                    truthPrompt = recs.getFirst().path("prompt_tokens").asLong();
                    truthGenerated = recs.getFirst().path("generated_tokens").asLong();
                    verifiedByNode++;
                }
            }
            long diff = 0;
            boolean over = false;
            if (truthGenerated >= 0) {
                diff += Math.abs(row.generated() - truthGenerated) + Math.abs(row.prompt() - truthPrompt);
                over = row.generated() > truthGenerated || row.prompt() > truthPrompt;
            } else {
                // Only the client's view is left (its node died): billed at least what it received, and the
                // prompt, once billed, the prompt's token count.
                if (row.generated() < s.receivedTokens()) diff += s.receivedTokens() - row.generated();
                Long p = promptTokens.get(s.prompt());
                if (p != null && row.prompt() > 0 && row.prompt() != p) {
                    diff += Math.abs(row.prompt() - p);
                    over |= row.prompt() > p;
                }
            }
            if (diff > 0) {
                off++;
                tokensOff += diff;
                example(examples, over ? "over-billed" : "under-billed", s, row);
            }
            if (over) doubled++;
        }
        int resumed = 0, movedBeforeFirstByte = 0;
        for (Row row : rows.values()) {
            if (row.nodes() == null || !row.nodes().contains(",")) continue;
            if (row.recomputed() > 0) resumed++;
            else movedBeforeFirstByte++;
        }
        int unknownRows = 0;
        for (String id : rows.keySet()) if (!seen.containsKey(id)) unknownRows++;
        ObjectNode r = JSON.createObjectNode();
        r.put("requests", seen.size());
        r.put("complete", complete);
        r.put("cut_or_cancelled", cut);
        r.put("refused_or_failed", refused);
        r.put("ledger_rows", rows.size());
        r.put("verified_against_a_node", verifiedByNode);
        r.put("resumed_mid_stream", resumed);
        r.put("moved_before_first_byte", movedBeforeFirstByte);
        r.put("rows_lost", lost);
        r.put("rows_double_counted", doubled + unknownRows);
        r.put("rows_with_tokens_off", off);
        r.put("tokens_off", tokensOff);
        r.put("rows_left_open", open);
        r.put("prompt_count_disagreements", promptDisagreements);
        r.putPOJO("kills", events);
        r.putPOJO("examples", examples);
        return r;
    }

    private static void example(List<String> examples, String what, Seen s, Row row) {
        if (examples.size() < 20) examples.add(what + ": " + s + " / " + row);
    }
}
