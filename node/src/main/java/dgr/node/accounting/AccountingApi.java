package dgr.node.accounting;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dgr.node.api.ApiError;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;

/**
 * {@code POST /v1/accounting}: the tracker asks, with the node token, what this node computed for some
 * request ids. Body {@code {"request_ids": ["...", ...]}} (at most {@link #MAX_IDS}); answer
 * {@code {"requests": [record, ...], "unknown": [id, ...]}}, a record per id this node knows (finished:
 * with its finish reason; running: {@code "finish_reason": null}), the rest listed as unknown.
 */
public final class AccountingApi {
    public static final int MAX_IDS = 1000;

    private final RecentRequests recent;
    private final byte[] nodeToken;
    private final ObjectMapper mapper;

    /** @param nodeToken the node token, or null: then the endpoint refuses everyone (no tracker to serve) */
    public AccountingApi(RecentRequests recent, String nodeToken, ObjectMapper mapper) {
        this.recent = recent;
        this.nodeToken = nodeToken == null ? null : nodeToken.getBytes(StandardCharsets.UTF_8);
        this.mapper = mapper;
    }

    public ObjectNode answer(String authorizationHeader, byte[] body) {
        authenticate(authorizationHeader);
        JsonNode root;
        try {
            root = mapper.readTree(body);
        } catch (IOException e) {
            throw ApiError.invalid("The body is not valid JSON: " + (e instanceof com.fasterxml.jackson.core.JsonProcessingException j
                    ? j.getOriginalMessage() : e.getMessage()), null, "invalid_json");
        }
        JsonNode ids = root == null ? null : root.get("request_ids");
        if (ids == null || !ids.isArray()) {
            throw ApiError.invalid("'request_ids' must be an array of request id strings.", "request_ids");
        }
        if (ids.size() > MAX_IDS) {
            throw ApiError.invalid("'request_ids' has " + ids.size() + " ids; at most " + MAX_IDS + " per call.",
                    "request_ids");
        }
        ObjectNode out = JsonNodeFactory.instance.objectNode();
        ArrayNode known = out.putArray("requests");
        ArrayNode unknown = out.putArray("unknown");
        for (JsonNode id : ids) {
            if (!id.isTextual()) throw ApiError.invalid("'request_ids' must hold strings, got " + id, "request_ids");
            recent.find(id.asText()).ifPresentOrElse(r -> known.add(toJson(r)), () -> unknown.add(id.asText()));
        }
        return out;
    }

    private void authenticate(String header) {
        if (nodeToken == null) {
            throw new ApiError(403, "permission_error", "This node was started without --node-token; its accounting "
                    + "is served only to a tracker holding that token.", null, "no_node_token");
        }
        String h = header == null ? "" : header.strip();
        byte[] given = h.regionMatches(true, 0, "Bearer ", 0, 7)
                ? h.substring(7).strip().getBytes(StandardCharsets.UTF_8) : new byte[0];
        if (!MessageDigest.isEqual(given, nodeToken)) {
            throw ApiError.unauthorized("The node's accounting needs the node token (Authorization: Bearer NODE_TOKEN).");
        }
    }

    static ObjectNode toJson(RequestRecord r) {
        ObjectNode o = JsonNodeFactory.instance.objectNode();
        o.put("request_id", r.requestId());
        o.put("model", r.model());
        o.put("tenant", r.tenant());
        o.put("prompt_tokens", r.promptTokens());
        o.put("cached_tokens", r.cachedTokens());
        o.put("generated_tokens", r.generatedTokens());
        o.put("delivered_tokens", r.deliveredTokens());
        o.put("recomputed_tokens", r.recomputedTokens());
        if (r.finishReason() == null) o.putNull("finish_reason");
        else o.put("finish_reason", r.finishReason());
        if (r.message() != null) o.put("message", r.message());
        o.put("started_ms", r.startedMs());
        if (r.endedMs() < 0) o.putNull("ended_ms");
        else o.put("ended_ms", r.endedMs());
        return o;
    }
}
