package dgr.tracker.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * A non-streaming answer put together from a dgr node's stream. The tracker asks a dgr node for a
 * non-streaming request as a stream (with token ids), so it sees every token as it is generated and can
 * resume the generation on another node when the first one dies, as for a stream; the client still gets
 * one JSON answer, the same object a node writes for {@code "stream": false} (docs/node.md): the text is
 * the stream's deltas joined (a node's whole answer is its token texts joined, the same pieces), id,
 * created and model are the stream's, the usage is the stream's usage chunk.
 */
final class WholeAnswer {
    private static final JsonNodeFactory F = JsonNodeFactory.instance;
    private final boolean chat;
    private final StringBuilder text = new StringBuilder();
    private String id;
    private JsonNode created;
    private String model;

    /** @param chat {@code /v1/chat/completions} (a message), else {@code /v1/completions} (a text) */
    WholeAnswer(boolean chat) { this.chat = chat; }

    /** Takes one chunk as the client would have seen it (the node extension already stripped). */
    void add(ObjectNode chunk) {
        if (id == null) {
            id = chunk.path("id").asText(null);
            created = chunk.get("created");
            model = chunk.path("model").asText(null);
        }
        JsonNode choice = chunk.path("choices").path(0);
        JsonNode piece = chat ? choice.path("delta").path("content") : choice.path("text");
        if (piece.isTextual()) text.append(piece.asText());
    }

    /** The answer a node would have written, in its field order. */
    ObjectNode build(String finishReason, JsonNode usage) {
        ObjectNode o = F.objectNode();
        o.put("id", id);
        o.put("object", chat ? "chat.completion" : "text_completion");
        o.set("created", created);
        o.put("model", model);
        ObjectNode c = o.putArray("choices").addObject();
        c.put("index", 0);
        if (chat) {
            ObjectNode m = c.putObject("message");
            m.put("role", "assistant");
            m.put("content", text.toString());
            m.putNull("refusal");
        } else {
            c.put("text", text.toString());
        }
        c.putNull("logprobs");
        c.put("finish_reason", finishReason);
        o.set("usage", usage == null ? F.nullNode() : usage);
        return o;
    }

    /**
     * The HTTP status a node gives a non-streaming request that ends the way this stream's error event
     * says (a stream's error travels in an event, its status is gone): the node's codes, else by type.
     */
    static int statusOf(JsonNode errorEvent) {
        JsonNode e = errorEvent.path("error");
        return switch (e.path("code").asText("")) {
            case "request_timeout" -> 504;
            case "cancelled", "unavailable", "route_unavailable" -> 503;
            default -> switch (e.path("type").asText("")) {
                case "invalid_request_error" -> 400;
                case "rate_limit_error" -> 429;
                case "timeout_error" -> 504;
                default -> 500;
            };
        };
    }
}
