package dgr.node.api;

/**
 * An API call that fails with an HTTP status and OpenAI's error body
 * {@code {"error":{"message","type","param","code"}}}. The message is written for the caller and
 * never carries a stack trace or internal state.
 */
public class ApiError extends RuntimeException {
    private final int status;
    private final String type;
    private final String param;
    private final String code;

    public ApiError(int status, String type, String message, String param, String code) {
        super(message, null, false, false);
        this.status = status;
        this.type = type;
        this.param = param;
        this.code = code;
    }

    public static ApiError invalid(String message, String param) {
        return new ApiError(400, "invalid_request_error", message, param, null);
    }

    public static ApiError invalid(String message, String param, String code) {
        return new ApiError(400, "invalid_request_error", message, param, code);
    }

    public static ApiError unauthorized(String message) {
        return new ApiError(401, "invalid_request_error", message, null, "invalid_api_key");
    }

    public static ApiError notFound(String message, String param, String code) {
        return new ApiError(404, "invalid_request_error", message, param, code);
    }

    public int status() { return status; }

    public String type() { return type; }

    public String param() { return param; }

    public String code() { return code; }
}
