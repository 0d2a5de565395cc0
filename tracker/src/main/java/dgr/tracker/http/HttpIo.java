package dgr.tracker.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.helidon.http.HeaderNames;
import io.helidon.http.Status;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Optional;

/** Reading bounded bodies, bearer tokens and writing JSON, for every tracker route. */
final class HttpIo {
    private HttpIo() {}

    static void sendJson(ServerResponse res, ObjectMapper mapper, int status, JsonNode body) {
        byte[] bytes;
        try {
            bytes = mapper.writeValueAsBytes(body);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot serialize a response", e);
        }
        res.status(Status.create(status));
        res.header(HeaderNames.CONTENT_TYPE, "application/json");
        res.send(bytes);
    }

    /** Reads the body, refusing more than {@code max} bytes before reading it all (HTTP 413). */
    static byte[] body(ServerRequest req, long max) {
        long declared = req.headers().contentLength().orElse(-1);
        if (declared > max) throw tooLarge(max);
        try (InputStream in = req.content().inputStream()) {
            byte[] bytes = in.readNBytes((int) Math.min(max + 1, Integer.MAX_VALUE - 8));
            if (bytes.length > max) throw tooLarge(max);
            return bytes;
        } catch (IOException e) {
            throw ApiFailure.invalid("We could not read the body of your request.", null);
        }
    }

    private static ApiFailure tooLarge(long max) {
        return new ApiFailure(413, "invalid_request_error", "The request body is larger than this server accepts ("
                + max + " bytes).", null, "request_too_large");
    }

    /** The token of an {@code Authorization: Bearer T} header, or empty. */
    static Optional<String> bearer(ServerRequest req) {
        return req.headers().first(HeaderNames.AUTHORIZATION)
                .filter(h -> h.regionMatches(true, 0, "Bearer ", 0, 7))
                .map(h -> h.substring(7).trim())
                .filter(t -> !t.isEmpty());
    }

    /** Constant-time comparison of a presented token with the configured one (null configured: never equal). */
    static boolean tokenMatches(String presented, String configured) {
        if (presented == null || configured == null) return false;
        return MessageDigest.isEqual(presented.getBytes(StandardCharsets.UTF_8), configured.getBytes(StandardCharsets.UTF_8));
    }
}
