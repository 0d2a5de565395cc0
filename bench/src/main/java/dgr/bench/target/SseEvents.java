package dgr.bench.target;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;

/**
 * Reads an OpenAI completions stream one SSE line at a time, as vLLM's benchmark client does: each
 * {@code data:} chunk with a choice that carries text or has not finished is one streamed token
 * chunk (its arrival time is a token time); a chunk with {@code usage} gives the exact token counts;
 * {@code data: [DONE]} ends the stream. A dgr tracker asked with {@code X-Dgr-Node-Comment: true} names
 * every node that served the stream in a comment line {@code : X-Dgr-Node a,b} before {@code [DONE]}.
 */
public final class SseEvents {
    /** What one line meant. */
    public sealed interface Line {
        record Chunk(String text) implements Line {}
        record Usage(int promptTokens, int completionTokens) implements Line {}
        record Finish(String reason) implements Line {}
        record Error(String message) implements Line {}
        record Done() implements Line {}
        /** The nodes that served the stream, in order, comma-separated (a dgr tracker's comment). */
        record ServedBy(String nodes) implements Line {}
        record Ignored() implements Line {}
    }

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Line IGNORED = new Line.Ignored();

    /** The comment a dgr tracker ends a stream with when asked: every node that served it. */
    static final String SERVED_BY_COMMENT = ": X-Dgr-Node ";

    private SseEvents() {}

    /** Interprets one line of the stream (a chunk with both text and a finish reason reads as a chunk). */
    public static Line parse(String line) {
        if (line.startsWith(SERVED_BY_COMMENT) && line.length() > SERVED_BY_COMMENT.length()) {
            return new Line.ServedBy(line.substring(SERVED_BY_COMMENT.length()).strip());
        }
        if (!line.startsWith("data:")) return IGNORED; // other comments, event:, id:, blank separators
        String data = line.substring(5).strip();
        if (data.equals("[DONE]")) return new Line.Done();
        JsonNode n;
        try {
            n = JSON.readTree(data);
        } catch (IOException e) {
            return new Line.Error("unparseable stream chunk: " + abbreviate(data));
        }
        if (n.has("error")) {
            JsonNode err = n.get("error");
            return new Line.Error(err.isObject() ? err.path("message").asText(err.toString()) : err.asText());
        }
        JsonNode choices = n.get("choices");
        if (choices != null && choices.isArray() && !choices.isEmpty()) {
            JsonNode c = choices.get(0);
            String text = c.path("text").isTextual() ? c.get("text").asText()
                    : c.path("delta").path("content").asText("");
            JsonNode fr = c.get("finish_reason");
            boolean finished = fr != null && !fr.isNull();
            if (!text.isEmpty() || !finished) return new Line.Chunk(text);
            return new Line.Finish(fr.asText());
        }
        JsonNode usage = n.get("usage");
        if (usage != null && usage.isObject()) {
            return new Line.Usage(usage.path("prompt_tokens").asInt(-1), usage.path("completion_tokens").asInt(-1));
        }
        return IGNORED;
    }

    /** The finish reason carried by a chunk line, or null. */
    public static String finishReasonOf(String line) {
        if (!line.startsWith("data:")) return null;
        try {
            JsonNode fr = JSON.readTree(line.substring(5).strip()).path("choices").path(0).get("finish_reason");
            return fr == null || fr.isNull() ? null : fr.asText();
        } catch (IOException e) {
            return null;
        }
    }

    static String abbreviate(String s) { return s.length() <= 200 ? s : s.substring(0, 200) + "..."; }
}
