package dgr.tracker.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dgr.tracker.Tracker;
import dgr.tracker.ledger.BudgetExceededException;
import dgr.tracker.ledger.IdempotencyConflictException;
import dgr.tracker.ledger.KeyHolder;
import dgr.tracker.ledger.Ledger;
import dgr.tracker.ledger.RequestStart;
import dgr.tracker.ledger.StoredResult;
import dgr.tracker.registry.ModelCapacity;
import dgr.tracker.registry.RegisteredNode;
import io.helidon.http.HeaderNames;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.util.HexFormat;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The tracker's front door for {@code /v1/completions} and {@code /v1/chat/completions}. One request
 * reads as the order things happen: authenticate → replay (Idempotency-Key) → reserve → route → relay
 * (first token) → settle. Routing and relaying, with their retries and resumes, are {@link RelayedRequest}'s.
 */
final class FrontDoor {
    private static final HexFormat HEX = HexFormat.of();
    /** A client that cannot read trailers asks with {@code X-Dgr-Node-Comment: true} for the node list in an SSE comment. */
    static final io.helidon.http.HeaderName NODE_COMMENT = HeaderNames.create("X-Dgr-Node-Comment");
    /** OpenAI's default max_tokens for completions; chat defaults to the rest of the context. */
    private static final int COMPLETIONS_DEFAULT_MAX_TOKENS = 16;
    /** Reserved for a chat request without max_tokens when no node reports its context length. */
    private static final int UNKNOWN_CONTEXT = 4096;
    /** Template tokens a chat message may add around its content (role markers, separators), reserved on top. */
    private static final int TEMPLATE_TOKENS_PER_MESSAGE = 8;

    private final Tracker tracker;
    private final ObjectMapper mapper;

    FrontDoor(Tracker tracker, ObjectMapper mapper) {
        this.tracker = tracker;
        this.mapper = mapper;
    }

    /** The caller's key holder; null when the tracker has no keys. Throws 401 when keys exist and this one does not. */
    KeyHolder authenticate(ServerRequest req) {
        Ledger ledger = tracker.ledger();
        Optional<String> presented = HttpIo.bearer(req);
        Optional<KeyHolder> holder = presented.flatMap(ledger::authenticate);
        if (holder.isPresent()) return holder.get();
        if (!ledger.keysRequired()) return null;
        throw ApiFailure.unauthorized(presented.isEmpty()
                ? "You didn't provide an API key. Provide it in the Authorization header (Authorization: Bearer KEY)."
                : "Incorrect API key provided.");
    }

    void generate(ServerRequest req, ServerResponse res, String path) throws InterruptedException {
        Instant arrival = Instant.now();
        KeyHolder holder = authenticate(req);
        byte[] raw = HttpIo.body(req, tracker.config().maxBodyBytes());
        ObjectNode body = parse(raw);
        String model = model(body);
        boolean stream = flag(body, "stream");
        String idempotencyKey = req.headers().first(HeaderNames.create("Idempotency-Key")).orElse(null);
        String requestId = idempotencyKey != null ? idempotencyKey : "req-" + HEX.formatHex(random(12));
        String bodySha = sha256(raw);

        if (idempotencyKey != null) {
            Optional<StoredResult> earlier;
            try {
                earlier = tracker.ledger().replay(idempotencyKey, bodySha);
            } catch (IdempotencyConflictException e) {
                throw new ApiFailure(422, "invalid_request_error", e.getMessage(), "Idempotency-Key", "idempotency_conflict");
            }
            if (earlier.isPresent()) {
                res.header(HeaderNames.create("Idempotent-Replayed"), "true");
                res.status(earlier.get().httpStatus());
                res.header(HeaderNames.CONTENT_TYPE, "application/json");
                res.send(earlier.get().bodyJson().getBytes(StandardCharsets.UTF_8));
                return;
            }
        }
        try {
            long max = maxTokens(body, model, path);
            try {
                tracker.ledger().reserve(new RequestStart(requestId, holder, model, promptBound(body, path) + max,
                        bodySha, arrival));
            } catch (BudgetExceededException bytesTooMany) {
                // The byte bound did not fit: the exact count might (ExactPrompt); else the refusal stands.
                var exact = new ExactPrompt(tracker, mapper).count(body, model, path);
                if (exact.isEmpty()) throw bytesTooMany;
                tracker.ledger().reserve(new RequestStart(requestId, holder, model, exact.getAsLong() + max, bodySha, arrival));
            }
        } catch (BudgetExceededException e) {
            throw new ApiFailure(429, "insufficient_quota", e.getMessage(), null, "budget_exceeded");
        } catch (IdempotencyConflictException e) {
            throw new ApiFailure(422, "invalid_request_error", e.getMessage(), "Idempotency-Key", "idempotency_conflict");
        }
        new RelayedRequest(tracker, mapper, requestId, holder == null ? null : holder.tenant(),
                model, path, forwardBody(body, stream), stream, stream && includeUsage(body), atEnd(req), res).run();
    }

    /**
     * What goes to the node: the client's body without any {@code dgr} field (only the tracker speaks the
     * node extension), with a seed when the client gave none (so a retried or resumed session draws the
     * same numbers; an unseeded request is random either way) and, for streams, usage always on (the
     * ledger needs it; the relay drops it again when the client did not ask).
     */
    private static ObjectNode forwardBody(ObjectNode body, boolean stream) {
        ObjectNode b = body.deepCopy();
        b.remove("dgr");
        if (!b.hasNonNull("seed")) b.put("seed", ThreadLocalRandom.current().nextLong() >>> 1);
        if (stream) {
            JsonNode so = b.get("stream_options");
            ObjectNode options = so instanceof ObjectNode o ? o : b.putObject("stream_options");
            options.put("include_usage", true);
        }
        return b;
    }

    /** How the client asked a stream to name every node at its end ({@code TE: trailers}, {@code X-Dgr-Node-Comment}). */
    private static ServedBy.AtEnd atEnd(ServerRequest req) {
        return ServedBy.AtEnd.of(req.headers().first(HeaderNames.TE).orElse(null), req.headers().first(NODE_COMMENT).orElse(null));
    }

    private static boolean includeUsage(ObjectNode body) {
        JsonNode v = body.path("stream_options").path("include_usage");
        return v.isBoolean() && v.asBoolean();
    }

    /** An upper bound of prompt tokens (a token is at least one byte), reserved before routing. */
    private static long promptBound(ObjectNode body, String path) {
        long prompt;
        if (path.endsWith("/chat/completions")) {
            prompt = TEMPLATE_TOKENS_PER_MESSAGE;
            for (JsonNode m : body.path("messages")) prompt += TEMPLATE_TOKENS_PER_MESSAGE + utf8(m.path("content").toString());
        } else {
            JsonNode p = body.path("prompt");
            prompt = p.isArray() ? 0 : utf8(p.asText(""));
            for (JsonNode e : p) prompt += e.isNumber() ? 1 : utf8(e.asText(""));
        }
        return prompt;
    }

    /** The most tokens the request may generate, reserved on top of its prompt. */
    private long maxTokens(ObjectNode body, String model, String path) {
        JsonNode mt = body.hasNonNull("max_completion_tokens") ? body.get("max_completion_tokens") : body.get("max_tokens");
        long max;
        if (mt != null && mt.canConvertToLong()) {
            max = Math.max(0, mt.asLong());
        } else if (path.endsWith("/chat/completions")) {
            max = contextLength(model);
        } else {
            max = COMPLETIONS_DEFAULT_MAX_TOKENS;
        }
        return max;
    }

    private int contextLength(String model) {
        int ctx = 0;
        for (RegisteredNode n : tracker.registry().all()) {
            ModelCapacity m = n.models().get(model);
            if (m != null) ctx = Math.max(ctx, m.contextLength());
        }
        return ctx > 0 ? ctx : UNKNOWN_CONTEXT;
    }

    private static long utf8(String s) { return s.getBytes(StandardCharsets.UTF_8).length; }

    private ObjectNode parse(byte[] raw) {
        try {
            JsonNode n = mapper.readTree(raw);
            if (n instanceof ObjectNode o) return o;
            throw ApiFailure.invalid("The request body must be a JSON object.", null);
        } catch (IOException e) {
            throw ApiFailure.invalid("We could not parse the JSON body of your request. (HINT: This likely means you"
                    + " aren't using your HTTP library correctly.)", null);
        }
    }

    private static String model(ObjectNode body) {
        JsonNode m = body.get("model");
        if (m == null || m.isNull()) throw ApiFailure.invalid("You must provide a model parameter.", "model");
        if (!m.isTextual() || m.asText().isBlank()) throw ApiFailure.invalid("'model' must be a non-empty string.", "model");
        return m.asText();
    }

    private static boolean flag(ObjectNode body, String field) {
        JsonNode v = body.get(field);
        if (v == null || v.isNull()) return false;
        if (!v.isBoolean()) throw ApiFailure.invalid("'" + field + "' must be a boolean, got " + v + ".", field);
        return v.asBoolean();
    }

    private static String sha256(byte[] bytes) {
        try {
            return HEX.formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }

    private static byte[] random(int n) {
        byte[] b = new byte[n];
        ThreadLocalRandom.current().nextBytes(b);
        return b;
    }
}
