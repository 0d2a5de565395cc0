package dgr.tracker.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dgr.tracker.Tracker;
import dgr.tracker.ledger.Settlement;
import dgr.tracker.registry.Backend;
import dgr.tracker.registry.ModelCapacity;
import dgr.tracker.registry.RegisteredNode;
import dgr.tracker.relay.NodeClient;
import dgr.tracker.routing.Decision;
import dgr.tracker.routing.Lease;
import io.helidon.http.HeaderNames;
import io.helidon.http.Status;
import io.helidon.webserver.http.ServerResponse;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One client request through the tracker: route, relay, and on a node's failure route again.
 *
 * <p>Before the client has received a byte, a failed node (refused connection, 5xx, 429, a stream that
 * breaks before its first chunk) is simply left out and the request goes to another node: invisible to
 * the client. After that, a dgr node's stream is <em>resumed</em>: the tracker asked the node for the
 * token id of every chunk and stripped it before relaying, so it sends the next node serving the same
 * recipe the original request plus those ids and the sampler step; that node recomputes prompt and
 * delivered tokens and streams the continuation, bit-identical by batch invariance. Chunk ids and
 * creation times are rewritten to the first node's, a repeated finish chunk is dropped, so the client
 * sees one uninterrupted stream.
 *
 * <p>A non-streaming request to a dgr node travels as a stream too ({@link WholeAnswer}): the tracker
 * sees each token, resumes the same way, and answers the client with the one JSON object a node would
 * have written. {@code X-Dgr-Node} names the nodes that served, in order, comma-separated: on a whole
 * answer every one of them; on a stream the header leaves with the first chunk and names the first, and a
 * client that sent {@code TE: trailers} gets the full list in an {@code X-Dgr-Node} trailer, one that sent
 * {@code X-Dgr-Node-Comment: true} in an SSE comment before {@code [DONE]} ({@link ServedBy.AtEnd}).
 */
final class RelayedRequest {
    private static final System.Logger LOG = System.getLogger(RelayedRequest.class.getName());
    private static final byte[] DATA = "data: ".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] END = "\n\n".getBytes(StandardCharsets.US_ASCII);
    /** Error codes of a node's stream that mean the node, not the request, gave up: resume elsewhere. */
    private static final Set<String> NODE_GAVE_UP = Set.of("cancelled", "unavailable");
    private static final int MAX_ERROR_BODY = 1 << 16;
    /** How long a cut stream's settlement waits for the node to end the session and report it. */
    private static final java.time.Duration CUT_ACCOUNTING_WAIT = java.time.Duration.ofSeconds(5);
    /** How long a cut stream's row waits, open, for a node that did not report in time (one restarting from its journal). */
    private static final java.time.Duration LATE_ACCOUNTING_WAIT = java.time.Duration.ofMinutes(2);
    /** The nodes that served, in order, comma-separated (for a stream: the first, and all in a trailer). */
    static final io.helidon.http.HeaderName SERVED_BY = HeaderNames.create("X-Dgr-Node");

    private final Tracker tracker;
    private final ObjectMapper mapper;
    private final String requestId;
    private final String tenant;
    private final String model;
    private final String path;
    private final ObjectNode body;
    private final boolean stream;
    private final boolean clientWantsUsage;
    /** How a stream names every node at its end: an X-Dgr-Node trailer, an SSE comment, or not at all. */
    private final ServedBy.AtEnd atEnd;
    private final ServerResponse res;

    private final Set<String> failed = new HashSet<>();
    private final List<String> servedBy = new ArrayList<>();
    /** The nodes whose chunks reached the client (or the whole answer), in order. */
    private final ServedBy contributors = new ServedBy();
    /** A chunk reached the client or the whole answer: from now on a failed node means resume, not retry. */
    private boolean started;
    /** A non-streaming answer being assembled from a dgr node's stream, or null. */
    private WholeAnswer whole;
    private final List<Integer> deliveredIds = new ArrayList<>();
    private long deliveredChunks;
    /** The request's exact prompt count as a dgr node's token chunks report it, or -1 (docs/tracker.md, the bill). */
    private long promptSeen = -1;
    private String recipeId;
    /** The first node's recipe and engine: a stream resumes only where both are the same. */
    private String resumeKey;
    private Backend firstBackend;
    private OutputStream out;
    private String chunkId;
    private JsonNode chunkCreated;
    private boolean finishSent;
    private boolean usageSent;
    private String finishReason;
    private JsonNode usage;
    private long recomputed;
    private int resumes;
    private long resumedDelivered;
    private String resultJson;
    private boolean settled;
    /** The current node's session slot: freed when the node has finished, before the client's last bytes. */
    private Lease lease;
    private boolean firstTokenRecorded;
    private boolean pulledForUnknown;
    private int lastStatus;
    private ObjectNode lastError;

    RelayedRequest(Tracker tracker, ObjectMapper mapper, String requestId, String tenant, String model, String path,
                   ObjectNode body, boolean stream, boolean clientWantsUsage, ServedBy.AtEnd atEnd, ServerResponse res) {
        this.tracker = tracker;
        this.mapper = mapper;
        this.requestId = requestId;
        this.tenant = tenant;
        this.model = model;
        this.path = path.substring(1); // relative to the node's base URL
        this.body = body;
        this.stream = stream;
        this.clientWantsUsage = clientWantsUsage;
        this.atEnd = atEnd;
        this.res = res;
    }

    private enum Attempt { DONE, NODE_FAILED, CLIENT_GONE, REFUSED }

    /**
     * Routes and relays until the client has its answer (or an error). The request is settled in the
     * ledger before the last bytes leave (the usage chunk, [DONE], the whole answer, the error), so a
     * client that saw its usage can count on the row being written.
     */
    void run() throws InterruptedException {
        try {
            while (true) {
                Decision d = tracker.router().route(model, resuming() ? resumeKey : null, failed);
                switch (d) {
                    case Decision.NoNode n -> {
                        // A model (or, resuming, a recipe) no report named: ask the nodes once before giving up.
                        if (!pulledForUnknown && (!n.anyKnown() || resuming()) && lastError == null) {
                            pulledForUnknown = true;
                            if (tracker.capabilities().pullAllForUnknownModel()) continue;
                        }
                        tracker.metrics().decision("no_node");
                        fail(noNode(n));
                        return;
                    }
                    case Decision.Full f -> {
                        tracker.metrics().decision("full");
                        tracker.metrics().queueWait(f.waitedNanos());
                        fail(new ApiFailure(429, "rate_limit_error", "Every node serving '" + model
                                + "' is at its recommended concurrency" + (f.queueFull() ? " and the tracker's queue is full"
                                : "; waited " + f.waitedNanos() / 1_000_000 + " ms") + ". Retry after a moment.", null,
                                "cluster_full"));
                        return;
                    }
                    case Decision.Routed r -> {
                        tracker.metrics().decision(r.lease().reason());
                        tracker.metrics().queueWait(r.waitedNanos());
                        Attempt a;
                        try (Lease lease = r.lease()) {
                            this.lease = lease;
                            a = attempt(lease.node());
                        }
                        switch (a) {
                            case DONE -> {
                                tracker.metrics().request(outcomeOf(finishReason).name().toLowerCase(java.util.Locale.ROOT), last());
                                return;
                            }
                            case REFUSED -> {
                                tracker.metrics().request("rejected", last());
                                return;
                            }
                            case CLIENT_GONE -> {
                                tracker.metrics().request("cut", last());
                                if (usageOfCutStream(r.lease().node())) settle(Settlement.Outcome.CUT, 200);
                                else settleLater(r.lease().node());
                                return;
                            }
                            case NODE_FAILED -> {
                                tracker.metrics().failover(resuming() ? "resume_mid_stream" : "retry_before_first_byte");
                                if (resuming()) {
                                    resumes++;
                                    resumedDelivered += deliveredIds.size();
                                }
                                if (resuming() && (firstBackend != Backend.DGR || resumeKey == null)) {
                                    fail(new ApiFailure(502, "server_error", "The node serving this stream"
                                            + " failed and it cannot be resumed on another (a " + firstBackend.wireName()
                                            + " backend).", null, "node_failed"));
                                    tracker.metrics().request("failed", last());
                                    return;
                                }
                            }
                        }
                    }
                }
            }
        } catch (InterruptedException e) {
            settle(Settlement.Outcome.FAILED, 503);
            throw e;
        } finally {
            // Whatever ended the request without settling it (a bug, an unexpected exception): never
            // leave the reservation open.
            if (!settled) settle(out == null ? Settlement.Outcome.FAILED : Settlement.Outcome.CUT, 500);
        }
    }

    private boolean resuming() { return started; }

    private String last() { return servedBy.isEmpty() ? null : servedBy.getLast(); }

    private ApiFailure noNode(Decision.NoNode n) {
        if (lastError != null) return null; // the last node's own answer goes to the client
        if (!n.anyKnown()) {
            return ApiFailure.notFound("The model '" + model + "' does not exist. The cluster serves: "
                    + String.join(", ", servedModels()) + ".", "model", "model_not_found");
        }
        return ApiFailure.unavailable("No healthy node serves '" + model + "'" + (resuming()
                ? " with recipe and engine " + resumeKey + " to resume this stream on" : failed.isEmpty() ? "" : " besides the "
                + failed.size() + " that failed this request") + ".", "no_node");
    }

    private List<String> servedModels() {
        Set<String> ids = new java.util.TreeSet<>();
        for (RegisteredNode n : tracker.registry().all()) if (tracker.registry().healthy(n)) ids.addAll(n.models().keySet());
        return new ArrayList<>(ids);
    }

    /** Ends the request with an error: an HTTP error before the stream started, an error event inside it. */
    private void fail(ApiFailure e) {
        if (e == null && out == null) { // relay the last node's refusal as it was
            settle(Settlement.Outcome.FAILED, lastStatus);
            sendJson(lastStatus, lastError);
            return;
        }
        if (out != null) {
            settle(Settlement.Outcome.FAILED, 200);
            try {
                writeEvent(mapper.writeValueAsBytes(e == null ? lastError : e.body()));
                out.write(contributors.done(atEnd).getBytes(StandardCharsets.US_ASCII));
                servedByTrailer();
                out.close();
            } catch (IOException | ClientGone ignored) {
                // The client is gone as well; nothing more to tell it.
            }
            return;
        }
        settle(Settlement.Outcome.FAILED, e.status());
        if (e.status() == 429) res.header(HeaderNames.RETRY_AFTER, "1");
        sendJson(e.status(), e.body());
    }

    private void sendJson(int status, JsonNode json) {
        HttpIo.sendJson(res, mapper, status, json);
    }

    private Attempt attempt(RegisteredNode node) throws InterruptedException {
        servedBy.add(node.id());
        if (recipeId == null) {
            ModelCapacity m = node.models().get(model);
            recipeId = m == null ? null : m.recipeId();
            resumeKey = m == null ? null : m.resumeKey();
            firstBackend = node.backend();
        }
        ObjectNode b = body.deepCopy();
        // A whole answer from a dgr node is asked for as a stream, unless the client's body is one the node
        // would refuse for its stream_options (then the node says so, as it would to the client).
        boolean assemble = !stream && node.backend() == Backend.DGR && !body.hasNonNull("stream_options");
        if (assemble) {
            b.put("stream", true);
            b.putObject("stream_options").put("include_usage", true);
            if (whole == null) whole = new WholeAnswer(path.endsWith("chat/completions"));
        }
        if ((stream || assemble) && node.backend() == Backend.DGR) {
            ObjectNode ext = b.putObject("dgr");
            ext.put("token_ids", true);
            if (resuming()) {
                ObjectNode resume = ext.putObject("resume");
                ArrayNode ids = resume.putArray("token_ids");
                for (int id : deliveredIds) ids.add(id);
                resume.put("sampler_step", deliveredIds.size());
            }
        }
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put("X-Dgr-Request-Id", requestId);
        if (tenant != null) headers.put("X-Dgr-Tenant", tenant);
        HttpResponse<InputStream> r;
        try {
            r = tracker.nodes().post(node.url(), path, node.bearer(), headers, mapper.writeValueAsBytes(b));
        } catch (IOException e) {
            return nodeFailed(node, "POST " + path + ": " + e);
        }
        contributors.headers();
        try (InputStream in = r.body()) {
            if (r.statusCode() != 200) return refused(node, r.statusCode(), in);
            return stream || assemble ? relayStream(node, in) : relayWhole(in);
        } catch (IOException e) {
            return nodeFailed(node, "reading the response: " + e);
        }
    }

    private Attempt nodeFailed(RegisteredNode node, String why) {
        LOG.log(System.Logger.Level.WARNING, "request " + requestId + ": node " + node.id() + " failed (" + why
                + ")" + (resuming() ? "; resuming after " + deliveredIds.size() + " tokens" : "; retrying elsewhere"));
        tracker.registry().markBroken(node, why);
        failed.add(node.id());
        contributors.failed();
        return Attempt.NODE_FAILED;
    }

    /** A non-200 answer: 429 and 5xx mean try another node; other statuses are the request's fault and go to the client. */
    private Attempt refused(RegisteredNode node, int status, InputStream in) throws IOException {
        byte[] bytes = in.readNBytes(MAX_ERROR_BODY);
        ObjectNode err;
        try {
            err = mapper.readTree(bytes) instanceof ObjectNode o && o.has("error") ? o : null;
        } catch (IOException e) {
            err = null;
        }
        if (err == null) {
            err = new ApiFailure(502, "server_error", "The node answered HTTP " + status + " without an error body.",
                    null, "bad_gateway").body();
        }
        lastStatus = status;
        lastError = err;
        if (status == 429 || status >= 500 || resuming()) {
            failed.add(node.id());
            if (status >= 500 && status != 503) tracker.registry().markBroken(node, "HTTP " + status);
            return Attempt.NODE_FAILED;
        }
        settle(Settlement.Outcome.FAILED, status);
        sendJson(status, err);
        return Attempt.REFUSED;
    }

    private Attempt relayWhole(InputStream in) throws IOException {
        byte[] bytes = in.readAllBytes();
        JsonNode answer = mapper.readTree(bytes);
        usage = answer.path("usage").isObject() ? answer.get("usage") : null;
        JsonNode choice = answer.path("choices").path(0);
        finishReason = choice.path("finish_reason").asText(null);
        deliveredChunks = usage == null ? 0 : usage.path("completion_tokens").asLong(0);
        resultJson = new String(bytes, StandardCharsets.UTF_8);
        tracker.ledger().firstToken(requestId, Instant.now());
        settle(outcomeOf(finishReason), 200);
        lease.close(); // the node is done: a client's next request may take this slot at once
        res.status(Status.OK_200);
        res.header(HeaderNames.CONTENT_TYPE, "application/json");
        res.header(SERVED_BY, last());
        res.send(bytes);
        return Attempt.DONE;
    }

    /**
     * Copies the node's server-sent events to the client one by one, each as soon as it is read. Returns
     * NODE_FAILED when the node's stream ends without {@code [DONE]} (a killed node: its socket closes).
     */
    private Attempt relayStream(RegisteredNode node, InputStream in) {
        NodeClient.Watch watch = tracker.nodes().watch(in);
        try (watch) {
            BufferedReader lines = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
            String line;
            while ((line = lines.readLine()) != null) {
                watch.progress();
                long read = System.nanoTime();
                if (!line.startsWith("data:")) continue; // blank separators, comments
                String data = line.substring(5).trim();
                if (data.equals("[DONE]")) {
                    if (whole != null) return answerWhole();
                    settle(outcomeOf(finishReason), 200);
                    lease.close(); // the node is done: a client's next request may take this slot at once
                    writeRaw(contributors.done(atEnd));
                    servedByTrailer();
                    out.close();
                    return Attempt.DONE;
                }
                JsonNode event = mapper.readTree(data);
                if (!(event instanceof ObjectNode chunk)) continue;
                if (chunk.has("error")) {
                    String code = chunk.path("error").path("code").asText("");
                    if (node.backend() == Backend.DGR && NODE_GAVE_UP.contains(code)) {
                        in.close();
                        return nodeFailed(node, "stream ended with error " + code);
                    }
                    finishReason = "error";
                    if (whole != null) { // the node's whole answer would have been this error, with its status
                        int status = WholeAnswer.statusOf(chunk);
                        settle(Settlement.Outcome.FAILED, status);
                        lease.close();
                        sendJson(status, chunk);
                        return Attempt.DONE;
                    }
                    writeEvent(mapper.writeValueAsBytes(chunk));
                    continue;
                }
                ObjectNode relayed = rewrite(chunk);
                if (relayed != null) {
                    String resumed = contributors.chunkFrom(node.id(), deliveredIds.size() - 1);
                    if (resumed != null) LOG.log(System.Logger.Level.INFO, "request " + requestId + ": " + resumed);
                    started = true;
                    lease.firstToken(); // its time since routing: what routing expects of this node next (ServiceTimes)
                    if (whole != null) {
                        whole.add(relayed);
                    } else {
                        writeEvent(mapper.writeValueAsBytes(relayed));
                        tracker.metrics().relayed(System.nanoTime() - read);
                    }
                }
            }
            if (watch.expired()) return nodeFailed(node, "no chunk for " + tracker.config().chunkTimeout().toMillis() + " ms");
            return nodeFailed(node, "stream ended without [DONE] after " + deliveredIds.size() + " tokens");
        } catch (ClientGone gone) {
            return Attempt.CLIENT_GONE;
        } catch (IOException e) {
            return nodeFailed(node, watch.expired() ? "no chunk for " + tracker.config().chunkTimeout().toMillis() + " ms"
                    : "stream broke: " + e);
        }
    }

    /** A whole answer assembled from the stream: settled, then sent as the node would have sent it. */
    private Attempt answerWhole() throws IOException {
        byte[] bytes = mapper.writeValueAsBytes(whole.build(finishReason, usage));
        resultJson = new String(bytes, StandardCharsets.UTF_8);
        settle(outcomeOf(finishReason), 200);
        lease.close(); // the node is done: a client's next request may take this slot at once
        res.status(Status.OK_200);
        res.header(HeaderNames.CONTENT_TYPE, "application/json");
        res.header(SERVED_BY, contributors.header());
        res.send(bytes);
        return Attempt.DONE;
    }

    /** Names every node that served the stream in its X-Dgr-Node trailer, when the client takes trailers. */
    private void servedByTrailer() {
        if (atEnd == ServedBy.AtEnd.TRAILER && out != null) res.trailers().set(SERVED_BY, contributors.header());
    }

    /** Strips the node extension, keeps the first node's id and time, drops repeats and unasked usage; null: drop. */
    private ObjectNode rewrite(ObjectNode chunk) throws IOException {
        JsonNode ext = chunk.remove("dgr");
        boolean token = ext != null && ext.has("token_id");
        if (ext != null && ext.has("prompt_tokens")) promptSeen = ext.get("prompt_tokens").asLong();
        if (token) deliveredIds.add(ext.get("token_id").asInt());
        if (chunkId == null) {
            chunkId = chunk.path("id").asText(null);
            chunkCreated = chunk.get("created");
        } else {
            if (chunkId != null) chunk.put("id", chunkId);
            if (chunkCreated != null) chunk.set("created", chunkCreated);
        }
        JsonNode choices = chunk.path("choices");
        if (chunk.hasNonNull("usage")) usage = chunk.get("usage");
        if (choices.isArray() && choices.isEmpty() && chunk.hasNonNull("usage")) {
            if (!clientWantsUsage || usageSent) return null;
            usageSent = true;
            settle(outcomeOf(finishReason), 200); // before the usage the client bills by leaves
            return chunk;
        }
        if (!clientWantsUsage) chunk.remove("usage");
        JsonNode finish = choices.path(0).path("finish_reason");
        if (!finish.isMissingNode() && !finish.isNull()) {
            if (finishSent) return null;
            finishSent = true;
            finishReason = finish.asText();
        } else if (!token && node0Backend() != Backend.DGR && hasText(choices.path(0))) {
            deliveredChunks++; // an OpenAI backend: count content chunks as tokens
        }
        if (token) deliveredChunks++;
        if ((token || deliveredChunks > 0) && !firstTokenRecorded) {
            firstTokenRecorded = true;
            tracker.ledger().firstToken(requestId, Instant.now());
        }
        return chunk;
    }

    private Backend node0Backend() { return firstBackend; }

    private static boolean hasText(JsonNode choice) {
        String t = choice.has("text") ? choice.path("text").asText("") : choice.path("delta").path("content").asText("");
        return !t.isEmpty();
    }

    private void writeEvent(byte[] json) {
        try {
            OutputStream o = clientStream();
            o.write(DATA);
            o.write(json);
            o.write(END);
            o.flush();
        } catch (IOException | RuntimeException e) {
            throw new ClientGone(e);
        }
    }

    private void writeRaw(String s) {
        try {
            OutputStream o = clientStream();
            o.write(s.getBytes(StandardCharsets.US_ASCII));
            o.flush();
        } catch (IOException | RuntimeException e) {
            throw new ClientGone(e);
        }
    }

    /** The client's event stream, opened (headers sent) at the first chunk: before it, a failure is invisible. */
    private OutputStream clientStream() {
        if (out == null) {
            res.status(Status.OK_200);
            res.header(HeaderNames.CONTENT_TYPE, "text/event-stream; charset=utf-8");
            res.header(HeaderNames.CACHE_CONTROL, "no-cache");
            res.header(SERVED_BY, last());
            if (atEnd == ServedBy.AtEnd.TRAILER) res.header(HeaderNames.TRAILER, SERVED_BY.defaultCase());
            out = res.outputStream();
        }
        return out;
    }

    private static Settlement.Outcome outcomeOf(String finishReason) {
        if (finishReason == null) return Settlement.Outcome.FAILED;
        return switch (finishReason) {
            case "stop" -> Settlement.Outcome.STOP;
            case "length" -> Settlement.Outcome.LENGTH;
            default -> Settlement.Outcome.FAILED;
        };
    }

    /**
     * A stream its client cut is billed at what the node computed for it, which is more than the relay saw
     * and comes in no usage chunk: the node's own accounting of this request id, once its session has ended.
     */
    private boolean usageOfCutStream(RegisteredNode node) throws InterruptedException {
        if (usage != null || node.backend() != Backend.DGR) return true;
        tracker.nodeAccounting().awaitFinished(node.id(), node.url().toString(), node.bearer(), requestId,
                CUT_ACCOUNTING_WAIT).ifPresent(this::useNodeRecord);
        return usage != null;
    }

    private void useNodeRecord(dgr.tracker.ledger.NodeAccountingClient.NodeRecord rec) {
        ObjectNode u = mapper.createObjectNode();
        u.put("prompt_tokens", rec.promptTokens());
        u.put("completion_tokens", rec.generatedTokens());
        u.putObject("prompt_tokens_details").put("cached_tokens", rec.cachedTokens());
        usage = u;
    }

    /**
     * A cut stream whose node did not report in time (it died, its journal outlives it, or it is slow): the row
     * stays open while the node is asked again for up to {@link #LATE_ACCOUNTING_WAIT}, then is settled at the
     * node's record, or at what the tracker saw (the prompt the node reported and the tokens delivered) when
     * the node answers without it (it died with the session running) or never answers. The client is gone, so no final chunk waits on it; a tracker that dies meanwhile
     * leaves the row to its recovery.
     */
    private void settleLater(RegisteredNode node) {
        settled = true;   // handed over: the request's own paths must not settle it
        Thread.ofVirtual().name("dgr-late-settle-" + requestId).start(() -> {
            try {
                tracker.nodeAccounting().awaitFinal(node.id(), node.url().toString(), node.bearer(), requestId,
                        LATE_ACCOUNTING_WAIT).ifPresent(this::useNodeRecord);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            try {
                write(Settlement.Outcome.CUT, 200);
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "request " + requestId + ": late settlement failed (" + e.getMessage()
                        + "); the row stays open for recovery");
            }
        });
    }

    /** Writes the request's row once; later calls change nothing. */
    private void settle(Settlement.Outcome outcome, int status) {
        if (settled) return;
        settled = true;
        write(outcome, status);
    }

    private void write(Settlement.Outcome outcome, int status) {
        // Without the node's usage (its node died with its accounting, or never answered) the bill is what the
        // tracker saw: the prompt the node reported on its chunks and the tokens delivered, never more.
        long prompt = usage == null ? Math.max(0, promptSeen) : usage.path("prompt_tokens").asLong(0);
        long cached = usage == null ? 0 : usage.path("prompt_tokens_details").path("cached_tokens").asLong(0);
        long generated = usage == null ? deliveredChunks : usage.path("completion_tokens").asLong(deliveredChunks);
        recomputed += resumes * prompt + resumedDelivered;
        if (resumes > 0) tracker.metrics().recomputed(recomputed);
        String result = stream ? (usage == null ? null : usage.toString()) : resultJson;
        tracker.ledger().settle(new Settlement(requestId, recipeId, List.copyOf(servedBy), prompt, cached, generated,
                deliveredChunks, recomputed, outcome, status, result, Instant.now()));
    }

    /** The client closed its connection: the node's stream is closed with it, so the node cancels the session. */
    private static final class ClientGone extends RuntimeException {
        ClientGone(Throwable cause) { super("client disconnected", cause, false, false); }
    }
}
