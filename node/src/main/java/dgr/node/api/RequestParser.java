package dgr.node.api;

import dgr.engine.chat.ChatMessage;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Turns request bodies into checked requests. Every known field is type-checked (a wrong type is a
 * 400 naming the field); unknown fields are ignored as OpenAI does; fields that would change the
 * answer in ways dgr does not implement are refused rather than silently dropped.
 */
public final class RequestParser {
    /** OpenAI's limit on stop sequences. */
    static final int MAX_STOP_STRINGS = 4;
    private static final Set<String> CHAT_ROLES = Set.of("system", "developer", "user", "assistant", "tool");

    private final ObjectMapper mapper = new ObjectMapper()
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

    public CompletionRequest completion(byte[] body) {
        ObjectNode root = object(body);
        GenerationParams params = common(root, "max_tokens");
        refuseIfSet(root, "echo", n -> n.isBoolean() && n.asBoolean());
        refuseIfSet(root, "best_of", n -> !(n.isIntegralNumber() && n.asLong() == 1));
        refuseIfSet(root, "logprobs", n -> !(n.isIntegralNumber() && n.asLong() == 0));
        refuseIfSet(root, "suffix", n -> !(n.isTextual() && n.asText().isEmpty()));
        return new CompletionRequest(params, prompt(root.get("prompt")));
    }

    public ChatRequest chat(byte[] body) {
        ObjectNode root = object(body);
        String maxField = root.hasNonNull("max_completion_tokens") ? "max_completion_tokens" : "max_tokens";
        GenerationParams params = common(root, maxField);
        // Chat's logprobs is a boolean (the count is top_logprobs); completions' is the integer.
        JsonNode lp = root.get("logprobs");
        if (lp != null && !lp.isNull() && !lp.isBoolean()) throw wrongType("logprobs", "a boolean", lp);
        refuseIfSet(root, "logprobs", n -> n.asBoolean());
        refuseIfSet(root, "top_logprobs", n -> true);
        refuseIfSet(root, "tools", n -> !(n.isArray() && n.isEmpty()));
        refuseIfSet(root, "functions", n -> !(n.isArray() && n.isEmpty()));
        refuseIfSet(root, "response_format", n -> !(n.isObject() && "text".equals(n.path("type").asText())));
        return new ChatRequest(params, messages(root.get("messages")), templateKwargs(root.get("chat_template_kwargs")));
    }

    private ObjectNode object(byte[] body) {
        BodyEncoding.requireUtf8(body);
        JsonNode root;
        try {
            root = mapper.readTree(body);
        } catch (JsonProcessingException e) {
            throw ApiError.invalid(JsonSyntax.describe(e), null, "invalid_json");
        } catch (java.io.IOException e) {
            throw ApiError.invalid("We could not read the body of your request.", null, "invalid_json");
        }
        if (root == null || root.isMissingNode()) {
            throw ApiError.invalid("The request body is empty; a JSON object is required.", null, "invalid_json");
        }
        if (!(root instanceof ObjectNode o)) {
            throw ApiError.invalid("The request body must be a JSON object.", null, "invalid_json");
        }
        return o;
    }

    private GenerationParams common(ObjectNode root, String maxTokensField) {
        String model = requiredString(root, "model");
        Integer maxTokens = null;
        JsonNode mt = root.get(maxTokensField);
        if (mt != null && !mt.isNull()) {
            long v = integer(mt, maxTokensField);
            if (v < 1) throw ApiError.invalid(maxTokensField + " must be at least 1, got " + v + ".", maxTokensField);
            maxTokens = (int) Math.min(v, Integer.MAX_VALUE);
        }
        SamplingParams sampling = SamplingFields.parse(root);
        JsonNode n = root.get("n");
        if (n != null && !n.isNull()) {
            long v = integer(n, "n");
            if (v != 1) throw ApiError.invalid("Only n=1 is supported, got n=" + v + ".", "n");
        }
        boolean stream = bool(root, "stream", false);
        boolean includeUsage = false;
        JsonNode so = root.get("stream_options");
        if (so != null && !so.isNull()) {
            if (!so.isObject()) throw wrongType("stream_options", "an object", so);
            if (!stream) {
                throw ApiError.invalid("stream_options is only allowed when stream is true.", "stream_options");
            }
            JsonNode iu = so.get("include_usage");
            if (iu != null && !iu.isNull()) {
                if (!iu.isBoolean()) throw wrongType("stream_options.include_usage", "a boolean", iu);
                includeUsage = iu.asBoolean();
            }
        }
        String user = null;
        JsonNode u = root.get("user");
        if (u != null && !u.isNull()) {
            if (!u.isTextual()) throw wrongType("user", "a string", u);
            user = u.asText();
        }
        // ignore_eos: the vLLM / llama-server extension benchmarks send to get fixed-length outputs.
        boolean ignoreEos = false;
        JsonNode ie = root.get("ignore_eos");
        if (ie != null && !ie.isNull()) {
            if (!ie.isBoolean()) throw wrongType("ignore_eos", "a boolean", ie);
            ignoreEos = ie.asBoolean();
        }
        return new GenerationParams(model, maxTokens, sampling,
                stop(root.get("stop")), stream, includeUsage, user, ignoreEos);
    }

    private static List<String> stop(JsonNode node) {
        if (node == null || node.isNull()) return List.of();
        List<String> out = new ArrayList<>();
        if (node.isTextual()) {
            out.add(node.asText());
        } else if (node.isArray()) {
            for (JsonNode e : node) {
                if (!e.isTextual()) throw wrongType("stop", "a string or an array of strings", node);
                out.add(e.asText());
            }
        } else {
            throw wrongType("stop", "a string or an array of strings", node);
        }
        if (out.size() > MAX_STOP_STRINGS) {
            throw ApiError.invalid("stop may hold at most " + MAX_STOP_STRINGS + " sequences, got " + out.size() + ".",
                    "stop");
        }
        for (String s : out) if (s.isEmpty()) throw ApiError.invalid("stop sequences must not be empty.", "stop");
        return out;
    }

    private static PromptInput prompt(JsonNode node) {
        if (node == null || node.isNull()) throw ApiError.invalid("you must provide a prompt parameter.", "prompt");
        if (node.isTextual()) return new PromptInput.Text(node.asText());
        if (node.isArray()) {
            if (node.isEmpty()) throw ApiError.invalid("prompt must not be an empty array.", "prompt");
            JsonNode first = node.get(0);
            if (first.isTextual() || first.isArray()) {
                if (node.size() != 1) {
                    throw ApiError.invalid("Only one prompt per request is supported, got " + node.size() + ".",
                            "prompt");
                }
                return first.isTextual() ? new PromptInput.Text(first.asText()) : tokens(first);
            }
            return tokens(node);
        }
        throw wrongType("prompt", "a string, an array of token ids, or an array holding one of these", node);
    }

    private static PromptInput tokens(JsonNode array) {
        if (array.isEmpty()) throw ApiError.invalid("prompt must not be an empty array.", "prompt");
        int[] ids = new int[array.size()];
        for (int i = 0; i < ids.length; i++) {
            JsonNode e = array.get(i);
            if (!e.isIntegralNumber() || !e.canConvertToInt() || e.asInt() < 0) {
                throw ApiError.invalid("prompt token ids must be non-negative integers; element " + i + " is "
                        + describe(e) + ".", "prompt");
            }
            ids[i] = e.asInt();
        }
        return new PromptInput.Tokens(ids);
    }

    /**
     * {@code chat_template_kwargs}: an object whose members become template variables, JSON values
     * as Jinja sees them (objects as maps, arrays as lists). It may not replace the variables dgr
     * sets itself ({@code messages}, {@code add_generation_prompt}, {@code bos_token}, {@code eos_token}).
     */
    private Map<String, Object> templateKwargs(JsonNode node) {
        if (node == null || node.isNull()) return Map.of();
        if (!node.isObject()) throw wrongType("chat_template_kwargs", "an object", node);
        Map<String, Object> out = new LinkedHashMap<>();
        for (Map.Entry<String, JsonNode> e : node.properties()) {
            if (dgr.engine.chat.ChatTemplate.RESERVED.contains(e.getKey())) {
                throw ApiError.invalid("chat_template_kwargs may not set '" + e.getKey()
                        + "': dgr sets it from the request.", "chat_template_kwargs");
            }
            out.put(e.getKey(), mapper.convertValue(e.getValue(), Object.class));
        }
        return out;
    }

    private static List<ChatMessage> messages(JsonNode node) {
        if (node == null || node.isNull()) throw ApiError.invalid("you must provide a messages parameter.", "messages");
        if (!node.isArray()) throw wrongType("messages", "an array", node);
        if (node.isEmpty()) throw ApiError.invalid("messages must hold at least one message.", "messages");
        List<ChatMessage> out = new ArrayList<>();
        for (int i = 0; i < node.size(); i++) {
            JsonNode m = node.get(i);
            String where = "messages[" + i + "]";
            if (!m.isObject()) throw wrongType(where, "an object", m);
            JsonNode role = m.get("role");
            if (role == null || !role.isTextual()) throw wrongType(where + ".role", "a string", role);
            if (!CHAT_ROLES.contains(role.asText())) {
                throw ApiError.invalid(where + ".role must be one of " + CHAT_ROLES + ", got '" + role.asText() + "'.",
                        where + ".role");
            }
            out.add(new ChatMessage(role.asText(), content(m.get("content"), where + ".content")));
        }
        return out;
    }

    private static String content(JsonNode c, String where) {
        if (c == null || c.isNull()) return "";
        if (c.isTextual()) return c.asText();
        if (c.isArray()) {
            StringBuilder sb = new StringBuilder();
            for (JsonNode part : c) {
                if (!part.isObject() || !"text".equals(part.path("type").asText()) || !part.path("text").isTextual()) {
                    throw ApiError.invalid(where + " parts must be {\"type\":\"text\",\"text\":...}; other part types"
                            + " are not supported.", where);
                }
                sb.append(part.get("text").asText());
            }
            return sb.toString();
        }
        throw wrongType(where, "a string or an array of text parts", c);
    }

    private static String requiredString(ObjectNode root, String field) {
        JsonNode n = root.get(field);
        if (n == null || n.isNull()) throw ApiError.invalid("you must provide a " + field + " parameter.", field);
        if (!n.isTextual()) throw wrongType(field, "a string", n);
        return n.asText();
    }

    static long integer(JsonNode n, String field) {
        // 5.0 is accepted as 5, as Python-based servers do; 5.5 is not an integer.
        if (n.isIntegralNumber() && n.canConvertToLong()) return n.asLong();
        if (n.isIntegralNumber()) {
            throw ApiError.invalid("Invalid value for '" + field + "': " + n.asText() + " is out of range (at most "
                    + Long.MAX_VALUE + ").", field, "invalid_value");
        }
        if (n.isFloatingPointNumber() && n.asDouble() == Math.rint(n.asDouble()) && Math.abs(n.asDouble()) < 1e15) {
            return (long) n.asDouble();
        }
        throw wrongType(field, "an integer", n);
    }

    private static boolean bool(ObjectNode root, String field, boolean dflt) {
        JsonNode n = root.get(field);
        if (n == null || n.isNull()) return dflt;
        if (!n.isBoolean()) throw wrongType(field, "a boolean", n);
        return n.asBoolean();
    }

    private static void refuseIfSet(ObjectNode root, String field, java.util.function.Predicate<JsonNode> unsupported) {
        JsonNode n = root.get(field);
        if (n != null && !n.isNull() && unsupported.test(n)) {
            throw ApiError.invalid(field + " is not supported by this server.", field, "unsupported_parameter");
        }
    }

    static ApiError wrongType(String field, String expected, JsonNode got) {
        return ApiError.invalid("Invalid type for '" + field + "': expected " + expected + ", but got "
                + describe(got) + ".", field, "invalid_type");
    }

    private static String describe(JsonNode n) {
        if (n == null || n.isMissingNode()) return "nothing";
        return switch (n.getNodeType()) {
            case STRING -> "a string";
            case NUMBER -> n.isIntegralNumber() ? "an integer" : "a decimal number";
            case BOOLEAN -> "a boolean";
            case ARRAY -> "an array";
            case OBJECT, POJO -> "an object";
            case NULL -> "null";
            default -> "an unsupported value";
        };
    }
}
