package dgr.node.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.helidon.http.HeaderNames;
import io.helidon.http.Status;
import io.helidon.webserver.http.ServerResponse;

/** Sends a JSON body. */
final class JsonReply {
    private JsonReply() {}

    static void send(ServerResponse res, ObjectMapper mapper, Status status, JsonNode body) {
        byte[] bytes;
        try {
            bytes = mapper.writeValueAsBytes(body);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot serialize a response", e);
        }
        res.status(status);
        res.header(HeaderNames.CONTENT_TYPE, "application/json");
        res.send(bytes);
    }
}
