package dgr.tracker.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dgr.tracker.Tracker;
import dgr.tracker.registry.Backend;
import dgr.tracker.registry.RegisteredNode;
import java.io.IOException;
import java.io.InputStream;
import java.net.http.HttpResponse;
import java.util.Map;
import java.util.OptionalLong;

/**
 * A request's exact prompt token count, from a dgr node serving its model ({@code "dgr": {"count_prompt": true}}:
 * the node tokenizes, applies the chat template, and generates nothing). The front door reserves a byte bound
 * first (a token is at least one byte, so it never under-reserves); only when that bound does not fit a key's
 * budget does it ask for the exact count and reserve that instead, so a small budget is not refused for bytes
 * that are not tokens, and an ample one pays no round trip.
 */
final class ExactPrompt {
    private final Tracker tracker;
    private final ObjectMapper mapper;

    ExactPrompt(Tracker tracker, ObjectMapper mapper) {
        this.tracker = tracker;
        this.mapper = mapper;
    }

    /** The exact count from the first healthy dgr node that answers, or empty (none serves it, or all failed). */
    OptionalLong count(ObjectNode body, String model, String path) throws InterruptedException {
        ObjectNode b = body.deepCopy();
        b.put("stream", false);
        b.remove("stream_options");
        b.putObject("dgr").put("count_prompt", true);
        byte[] bytes;
        try {
            bytes = mapper.writeValueAsBytes(b);
        } catch (IOException e) {
            return OptionalLong.empty();
        }
        for (RegisteredNode n : tracker.registry().all()) {
            if (n.backend() != Backend.DGR || !n.models().containsKey(model) || !tracker.registry().healthy(n)) continue;
            try {
                HttpResponse<InputStream> r = tracker.nodes().post(n.url(), path.substring(1), n.bearer(), Map.of(), bytes);
                try (InputStream in = r.body()) {
                    if (r.statusCode() != 200) continue;
                    JsonNode answer = mapper.readTree(in.readNBytes(4096));
                    if (answer != null && answer.path("prompt_tokens").canConvertToLong()) {
                        return OptionalLong.of(answer.get("prompt_tokens").asLong());
                    }
                }
            } catch (IOException e) {
                // this node cannot tell now; ask the next
            }
        }
        return OptionalLong.empty();
    }
}
