package dgr.node.http;

import io.helidon.http.HeaderNames;
import io.helidon.http.Method;
import io.helidon.http.Status;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import java.util.List;
import java.util.Set;

/**
 * Cross-origin calls from browsers ({@code dgr serve --allowed-origins}): an allowed origin gets
 * {@code Access-Control-Allow-Origin} on every answer, and a preflight ({@code OPTIONS}) is answered here,
 * before authentication, since browsers send it without credentials. Any {@code OPTIONS} gets 204 with
 * the methods the API takes; an origin that is not allowed gets no CORS headers, so its browser refuses.
 */
final class Cors {
    private static final String METHODS = "GET, POST, OPTIONS";
    /** What OpenAI clients send: the key, the JSON body type, and the tracker's request id. */
    private static final String DEFAULT_HEADERS = "Authorization, Content-Type, " + NodeHttp.REQUEST_ID_HEADER;

    private final Set<String> origins;
    private final boolean anyOrigin;

    Cors(List<String> allowedOrigins) {
        this.anyOrigin = allowedOrigins.contains("*");
        this.origins = Set.copyOf(allowedOrigins);
    }

    /** Answers an {@code OPTIONS} request; false for every other method (the caller goes on). */
    boolean answerPreflight(ServerRequest req, ServerResponse res) {
        if (req.prologue().method() != Method.OPTIONS) return false;
        res.header(HeaderNames.ALLOW, METHODS);
        if (allowOrigin(req, res)) {
            res.header(HeaderNames.ACCESS_CONTROL_ALLOW_METHODS, METHODS);
            res.header(HeaderNames.ACCESS_CONTROL_ALLOW_HEADERS,
                    req.headers().first(HeaderNames.ACCESS_CONTROL_REQUEST_HEADERS).orElse(DEFAULT_HEADERS));
            res.header(HeaderNames.ACCESS_CONTROL_MAX_AGE, "600");
        }
        res.status(Status.NO_CONTENT_204);
        res.send();
        return true;
    }

    /** Adds the allow-origin header to an answer when the request's origin is allowed. */
    void decorate(ServerRequest req, ServerResponse res) {
        allowOrigin(req, res);
    }

    private boolean allowOrigin(ServerRequest req, ServerResponse res) {
        String origin = req.headers().first(HeaderNames.ORIGIN).orElse(null);
        if (origin == null || !(anyOrigin || origins.contains(origin))) return false;
        res.header(HeaderNames.ACCESS_CONTROL_ALLOW_ORIGIN, anyOrigin ? "*" : origin);
        if (!anyOrigin) res.header(HeaderNames.VARY, "Origin");
        return true;
    }
}
