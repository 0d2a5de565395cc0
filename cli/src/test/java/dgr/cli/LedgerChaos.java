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

/**
 * The ledger's chaos harness (issue 25): real {@code dgr tracker} and two {@code dgr serve} processes (each node
 * with its accounting journal), N requests (streams and not; some read to the end, some cancelled by the client
 * after a few chunks, some given a deadline) while a {@link Kills} plan {@code kill -9}s the tracker and the nodes
 * and restarts them, then the ledger checked against ground truth: what each client received and what the nodes'
 * accounting says.
 *
 * <p>Ground truth per request: a request whose client got its answer (a 200 answer, or a stream to its finish and
 * usage chunk) must be billed exactly that usage, its completion equal to the tokens the client counted; a request
 * the nodes report finished must be billed exactly what the last node to serve it computed (a resumed stream's
 * last node counts the resumed tokens); a request no node can tell of (its node died with it) must be billed the
 * prompt's token count and at least the tokens its client received. Reported: rows lost (a client got tokens, no
 * settled row), rows double-counted (billed above the truth), rows with tokens off (any difference), the total of
 * tokens off, and the key's totals (spent equals the rows' sum, nothing left reserved). Goal: all 0.
 *
 * <p>Used by {@link LedgerChaosCheck} (1,000 requests, random kills, opt-in) and {@link LedgerSurvivesChaosTest}
 * (a few dozen requests, one tracker and one node kill -9, in {@code ./dgr test}).
 */
final class LedgerChaos {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String NODE_TOKEN = "chaos-node-token";
    private static final String ADMIN_TOKEN = "chaos-admin";
    private static final String[] PROMPTS = {"The quick brown fox", "Once upon a time", "Hello world", "In the beginning",
            "A B C D E F", "lazy dog jumps over"};
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

    /**
     * One run's shape.
     *
     * @param requests    client requests in all
     * @param seed        seeds the requests' shapes and the kill plan
     * @param db          the ledger's JDBC URL, or null for a fresh SQLite file in {@code dir}
     * @param dir         where the processes' logs, the nodes' journals and the report go (emptied first)
     * @param concurrency clients at once
     * @param longShare   tenths of requests that generate long (100-350 tokens), so kills find streams mid-way
     * @param kills       what is killed when
     */
    record Options(int requests, long seed, String db, Path dir, int concurrency, int longShare, Kills kills) {}

    /** A kill plan: runs on its own thread while the clients send, until {@link Control#clientsDone()}. */
    interface Kills {
        void run(Control control) throws InterruptedException;
    }

    /** What a kill plan can see and do. */
    final class Control {
        private final Procs procs;
        private final Options options;
        private final AtomicBoolean clientsDone;
        private final AtomicInteger finished;
        final List<String> events = java.util.Collections.synchronizedList(new ArrayList<>());

        private Control(Procs procs, Options options, AtomicBoolean clientsDone, AtomicInteger finished) {
            this.procs = procs;
            this.options = options;
            this.clientsDone = clientsDone;
            this.finished = finished;
        }

        boolean clientsDone() { return clientsDone.get(); }

        /** Client requests ended so far. */
        int finished() { return finished.get(); }

        /** Streams that received a token and have not ended. */
        int midStream() { return midStream.get(); }

        /** Waits (at most {@code max}) until {@code n} streams are mid-way. */
        void awaitMidStream(int n, Duration max) throws InterruptedException {
            long until = System.nanoTime() + max.toNanos();
            while (midStream.get() < n && System.nanoTime() < until && !clientsDone()) Thread.sleep(5);
        }

        /** Waits until {@code n} client requests have ended (or the clients are done). */
        void awaitFinished(int n) throws InterruptedException {
            while (finished.get() < n && !clientsDone()) Thread.sleep(5);
        }

        /** kill -9 of the tracker, restarted after {@code downMs}. */
        void killTracker(long downMs) throws InterruptedException {
            events.add("kill -9 tracker (" + midStream.get() + " streams mid-way)");
            procs.tracker.kill9();
            Thread.sleep(downMs);
            procs.tracker = startTracker(options.dir(), procs.trackerPort, procs.db, procs.generation.incrementAndGet());
        }

        /** kill -9 of node {@code n}, restarted (from its journal) after {@code downMs}. */
        void killNode(int n, long downMs) throws InterruptedException {
            events.add("kill -9 node " + n + " (" + midStream.get() + " streams mid-way)");
            procs.nodes[n].kill9();
            Thread.sleep(downMs);
            procs.nodes[n] = startNode(options.dir(), n, procs.nodePorts[n], procs.tracker(), procs.generation.incrementAndGet());
        }
    }

    /** The random plan of the 1,000-request check: every 0.8-2.8 s, the tracker (40%) or a node (60%). */
    static Kills random(long seed) {
        return c -> {
            SplittableRandom rnd = new SplittableRandom(seed * 31 + 7);
            while (!c.clientsDone()) {
                Thread.sleep(800 + rnd.nextInt(2000));
                if (c.clientsDone()) break;
                int victim = rnd.nextInt(10);
                if (victim < 4) {
                    c.killTracker(200 + rnd.nextInt(800));
                } else {
                    c.awaitMidStream(2, Duration.ofSeconds(5));
                    c.killNode(victim < 7 ? 0 : 1, 200 + rnd.nextInt(800));
                }
            }
        };
    }

    /** What a run found: the report, and the key's totals against the rows'. */
    record Result(ObjectNode report, long keySpent, long keyReserved, long rowsBilled) {}

    Result run(Options o) throws Exception {
        Path dir = o.dir();
        if (Files.exists(dir)) try (var files = Files.walk(dir)) {
            files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
        Files.createDirectories(dir);
        String db = o.db() != null ? o.db() : LedgerDatabase.sqliteUrl(dir.resolve("ledger.db"));
        String key;
        try (LedgerDatabase d = LedgerDatabase.open(db)) {
            key = new ApiKeyStore(d, Clock.systemUTC()).add("chaos", null).key();
        }
        Procs procs = new Procs(db, DgrProcess.freePort(), new int[] {DgrProcess.freePort(), DgrProcess.freePort()});
        try {
            procs.tracker = startTracker(dir, procs.trackerPort, db, procs.generation.incrementAndGet());
            for (int i = 0; i < 2; i++) {
                procs.nodes[i] = startNode(dir, i, procs.nodePorts[i], procs.tracker(), procs.generation.incrementAndGet());
            }
            awaitNodesUp(procs.tracker(), 2);

            Map<String, Seen> seen = new ConcurrentHashMap<>();
            AtomicBoolean clientsDone = new AtomicBoolean();
            AtomicInteger finished = new AtomicInteger();
            Control control = new Control(procs, o, clientsDone, finished);
            Thread chaos = Thread.ofPlatform().name("chaos").start(() -> {
                try {
                    o.kills().run(control);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } catch (RuntimeException e) {
                    control.events.add("chaos thread failed: " + String.valueOf(e.getMessage()).lines().findFirst().orElse(""));
                }
            });

            AtomicInteger next = new AtomicInteger();
            try (ExecutorService clients = Executors.newFixedThreadPool(o.concurrency())) {
                List<Future<?>> fs = new ArrayList<>();
                for (int c = 0; c < o.concurrency(); c++) {
                    fs.add(clients.submit(() -> {
                        for (int i; (i = next.getAndIncrement()) < o.requests(); ) {
                            Seen s = request(procs.tracker(), key, o.seed(), o.longShare(), i);
                            seen.put(s.id(), s);
                            finished.incrementAndGet();
                        }
                        return null;
                    }));
                }
                for (Future<?> f : fs) f.get();
            }
            clientsDone.set(true);
            chaos.join();

            // Everything up again; the tracker settles what it left open from the nodes' accounting.
            if (!procs.tracker.isAlive()) {
                procs.tracker = startTracker(dir, procs.trackerPort, db, procs.generation.incrementAndGet());
            }
            for (int i = 0; i < 2; i++) {
                if (!procs.nodes[i].isAlive()) {
                    procs.nodes[i] = startNode(dir, i, procs.nodePorts[i], procs.tracker(), procs.generation.incrementAndGet());
                }
            }
            Map<String, Row> rows = awaitNoOpenRows(db, Duration.ofSeconds(90));
            Map<String, List<JsonNode>> nodeRecords = new HashMap<>();
            for (int i = 0; i < 2; i++) {
                for (JsonNode r : accounting(procs.nodePorts[i], new ArrayList<>(seen.keySet()))) {
                    nodeRecords.computeIfAbsent(r.get("request_id").asText(), k -> new ArrayList<>()).add(r);
                }
            }
            ObjectNode report = check(seen, rows, nodeRecords, control.events);
            long billed = 0;
            for (Row r : rows.values()) if (r.state().equals("settled")) billed += r.prompt() + r.generated();
            long[] totals = keyTotals(db);
            report.put("key_spent_tokens", totals[0]);
            report.put("key_reserved_tokens", totals[1]);
            report.put("rows_billed_tokens", billed);
            Files.writeString(dir.resolve("report.json"), report.toPrettyString());
            return new Result(report, totals[0], totals[1], billed);
        } finally {
            procs.close();
        }
    }

    /** The processes, replaced as they are killed; closed by handle at the end. */
    private static final class Procs implements AutoCloseable {
        final String db;
        final int trackerPort;
        final int[] nodePorts;
        final AtomicInteger generation = new AtomicInteger();
        volatile DgrProcess tracker;
        final DgrProcess[] nodes = new DgrProcess[2];

        Procs(String db, int trackerPort, int[] nodePorts) {
            this.db = db;
            this.trackerPort = trackerPort;
            this.nodePorts = nodePorts;
        }

        String tracker() { return "http://127.0.0.1:" + trackerPort; }

        @Override
        public void close() {
            for (DgrProcess n : nodes) if (n != null) n.close();
            if (tracker != null) tracker.close();
        }
    }

    private static long[] keyTotals(String db) throws Exception {
        try (LedgerDatabase d = LedgerDatabase.open(db); Connection c = d.dataSource().getConnection();
             Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT SUM(spent_tokens), SUM(reserved_tokens) FROM api_keys")) {
            rs.next();
            return new long[] {rs.getLong(1), rs.getLong(2)};
        }
    }

    private static DgrProcess startTracker(Path dir, int port, String db, int gen) {
        return DgrProcess.start("tracker-" + gen, dir, List.of("tracker", "--port", Integer.toString(port),
                "--node-token", NODE_TOKEN, "--admin-token", ADMIN_TOKEN, "--db", db, "--tracker-id", "chaos"))
                .awaitHealthy("http://127.0.0.1:" + port, READY);
    }

    private static DgrProcess startNode(Path dir, int i, int port, String tracker, int gen) {
        return DgrProcess.start("node" + i + "-" + gen, dir, List.of("serve", "-m", DefaultModel.path().toString(), "-a", "llama-tiny",
                "--port", Integer.toString(port), "--accounting-file", dir.resolve("node" + i + "-accounting.jsonl").toString(),
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
    private Seen request(String tracker, String key, long seed, int longShare, int i) {
        SplittableRandom rnd = new SplittableRandom(seed * 1_000_003 + i);
        String id = "chaos-" + seed + "-" + i;
        int prompt = rnd.nextInt(PROMPTS.length);
        boolean stream = rnd.nextInt(10) < 7;
        int m = rnd.nextInt(10);
        Mode mode = !stream ? (m < 8 ? Mode.FULL : Mode.DEADLINE) : m < 6 ? Mode.FULL : m < 8 ? Mode.CANCEL : Mode.DEADLINE;
        // Most short; some long, so that a node's kill -9 finds streams in the middle (resumed elsewhere).
        int maxTokens = rnd.nextInt(10) >= longShare ? 4 + rnd.nextInt(60) : 100 + rnd.nextInt(250);
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
                if (attempt >= READY.toMillis() / 50) throw e;   // as long as a restart may take here
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
        int clientViewOnly = 0;
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
                // The nodes' own accounting: the last node to start serving it holds the request's usage (a
                // resumed session counts the tokens it resumed from). A node killed while serving it has none.
                List<JsonNode> recs = nodeRecords.getOrDefault(s.id(), List.of());
                JsonNode last = recs.stream().max(java.util.Comparator.comparingLong(r -> r.path("started_ms").asLong()))
                        .orElse(null);
                if (last != null && recs.stream().noneMatch(r -> r.path("finish_reason").isNull())) {
                    truthPrompt = last.path("prompt_tokens").asLong();
                    truthGenerated = last.path("generated_tokens").asLong();
                    verifiedByNode++;
                } else if (s.receivedTokens() > 0) {
                    clientViewOnly++;
                }
            }
            long diff = 0;
            boolean over = false;
            if (truthGenerated >= 0) {
                diff += Math.abs(row.generated() - truthGenerated) + Math.abs(row.prompt() - truthPrompt);
                over = row.generated() > truthGenerated || row.prompt() > truthPrompt;
            } else {
                // Only the client's view is left (its node died with its accounting): billed at least what it
                // received and, once it received a token (the tracker saw the node's prompt count), the prompt's
                // token count.
                if (row.generated() < s.receivedTokens()) diff += s.receivedTokens() - row.generated();
                Long p = promptTokens.get(s.prompt());
                if (p != null && (row.prompt() > 0 || s.receivedTokens() > 0) && row.prompt() != p) {
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
        r.put("client_view_only", clientViewOnly);
        r.put("resumed_mid_stream", resumed);
        r.put("moved_before_first_byte", movedBeforeFirstByte);
        r.put("rows_lost", lost);
        r.put("rows_double_counted", doubled + unknownRows);
        r.put("rows_with_tokens_off", off);
        r.put("tokens_off", tokensOff);
        r.put("rows_left_open", open);
        r.put("prompt_count_disagreements", promptDisagreements);
        events.forEach(r.putArray("kills")::add);
        examples.forEach(r.putArray("examples")::add);
        return r;
    }

    private static void example(List<String> examples, String what, Seen s, Row row) {
        if (examples.size() < 20) examples.add(what + ": " + s + " / " + row);
    }
}
