package dgr.node.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dgr.node.api.ApiError;
import dgr.node.api.ErrorBody;
import io.helidon.http.DirectHandler;
import io.helidon.http.HeaderNames;
import io.helidon.http.ServerResponseHeaders;
import io.helidon.http.Status;
import io.helidon.webserver.http.DirectHandlers;
import java.nio.charset.StandardCharsets;

/**
 * Bodies for the answers Helidon gives before a request reaches {@link NodeHttp}: a malformed
 * request line or header, a bad chunk size, a body cut short, too many concurrent requests. Helidon
 * sends them with an empty body; here they get OpenAI's error shape like every other answer of the
 * node, and one rate-limited log line ({@link ClientFaultLog}) instead of a stack trace.
 */
final class TransportErrors {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    private TransportErrors() {}

    /**
     * @param readingHead whether the current connection is between its request line and the end of its
     *                    head: an "internal error" there is a head cut short by the client (a 400)
     */
    static DirectHandlers handlers(ClientFaultLog faults, java.util.function.BooleanSupplier readingHead) {
        DirectHandlers.Builder b = DirectHandlers.builder();
        for (DirectHandler.EventType t : DirectHandler.EventType.values()) b.addHandler(t, handler(faults, readingHead));
        return b.build();
    }

    private static DirectHandler handler(ClientFaultLog faults, java.util.function.BooleanSupplier readingHead) {
        return (request, event, defaultStatus, headers, message) -> {
            boolean cutHead = event == DirectHandler.EventType.INTERNAL_ERROR && readingHead.getAsBoolean();
            Status status = cutHead ? Status.BAD_REQUEST_400 : defaultStatus;
            ApiError e = cutHead ? new ApiError(400, "invalid_request_error", "The request's headers ended before "
                    + "the blank line that closes them (connection closed mid-head).", null, "malformed_request")
                    : error(event, status, message);
            if (status.code() < 500) {
                String target = request.method() == null || request.method().isBlank() ? "" : " " + request.method() + " " + request.path();
                faults.fault(status.code() + target + ": " + e.getMessage());
            }
            byte[] body;
            try {
                body = MAPPER.writeValueAsBytes(ErrorBody.of(e));
            } catch (JsonProcessingException x) {
                body = ("{\"error\":{\"message\":\"bad request\",\"type\":\"invalid_request_error\",\"param\":null,"
                        + "\"code\":null}}").getBytes(StandardCharsets.UTF_8);
            }
            ServerResponseHeaders h = headers;
            h.set(HeaderNames.CONTENT_TYPE, "application/json");
            return DirectHandler.TransportResponse.builder()
                    .status(status)
                    .headers(h)
                    .keepAlive(event.keepAlive() && !cutHead)
                    .entity(body)
                    .build();
        };
    }

    /** The OpenAI error for Helidon's event: the same words Helidon gives, where it gives any. */
    static ApiError error(DirectHandler.EventType event, Status status, String message) {
        String detail = message == null || message.isBlank() || message.startsWith("Bad request, see server log")
                ? null : message;
        int code = status.code();
        if (code >= 500 && code != 505 && code != 501) {
            return new ApiError(code, "server_error", detail != null && code == 503 ? detail
                    : "The server had an error while processing your request.", null, code == 503 ? "unavailable" : "internal_error");
        }
        if (code == 413) {
            return new ApiError(413, "invalid_request_error", "The request is larger than this server accepts"
                    + (detail != null ? ": " + detail : "."), null, "request_too_large");
        }
        if (code == 501) {
            return new ApiError(501, "invalid_request_error", "This server does not implement the request's transfer "
                    + "coding; send the body with Content-Length or chunked" + (detail != null ? " (" + detail + ")." : "."),
                    null, "unsupported_transfer_encoding");
        }
        if (code == 505) {
            return new ApiError(505, "invalid_request_error", "Only HTTP/1.1 is served" + (detail != null ? ": " + detail : "."),
                    null, "http_version_not_supported");
        }
        return new ApiError(code, "invalid_request_error", "The request is not valid HTTP/1.1"
                + (detail != null ? ": " + detail : "."), null, "malformed_request");
    }
}
