package dgr.tracker.http;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * A tracker API call that fails with an HTTP status and OpenAI's error body
 * {@code {"error":{"message","type","param","code"}}}; the message is written for the caller.
 */
public class ApiFailure extends RuntimeException {
    private final int status;
    private final String type;
    private final String param;
    private final String code;

    public ApiFailure(int status, String type, String message, String param, String code) {
        super(message, null, false, false);
        this.status = status;
        this.type = type;
        this.param = param;
        this.code = code;
    }

    public static ApiFailure invalid(String message, String param) {
        return new ApiFailure(400, "invalid_request_error", message, param, null);
    }

    public static ApiFailure unauthorized(String message) {
        return new ApiFailure(401, "invalid_request_error", message, null, "invalid_api_key");
    }

    public static ApiFailure notFound(String message, String param, String code) {
        return new ApiFailure(404, "invalid_request_error", message, param, code);
    }

    public static ApiFailure unavailable(String message, String code) {
        return new ApiFailure(503, "server_error", message, null, code);
    }

    public int status() { return status; }

    public String code() { return code; }

    public ObjectNode body() {
        ObjectNode root = JsonNodeFactory.instance.objectNode();
        ObjectNode err = root.putObject("error");
        err.put("message", getMessage());
        err.put("type", type);
        err.put("param", param);
        err.put("code", code);
        return root;
    }
}
