package dgr.node.api;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

/** OpenAI's error body {@code {"error":{"message","type","param","code"}}}. */
public final class ErrorBody {
    private ErrorBody() {}

    public static ObjectNode of(ApiError e) {
        ObjectNode root = JsonNodeFactory.instance.objectNode();
        ObjectNode err = root.putObject("error");
        err.put("message", e.getMessage());
        err.put("type", e.type());
        err.put("param", e.param());
        err.put("code", e.code());
        return root;
    }
}
