package dgr.node.api;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;

/**
 * Reads a request's sampling fields. Everything the engine's sampler does is applied; the sampling
 * fields other servers accept that dgr's sampler does not implement are refused by name when set to
 * anything but their "off" value, so a client never gets silently different sampling.
 */
final class SamplingFields {
    /** llama-server / vLLM sampling fields dgr does not implement, each with the value that means "off". */
    private static final Map<String, Double> UNSUPPORTED_UNLESS = Map.ofEntries(
            Map.entry("typical_p", 1.0), Map.entry("tfs_z", 1.0), Map.entry("mirostat", 0.0),
            Map.entry("dynatemp_range", 0.0), Map.entry("dry_multiplier", 0.0), Map.entry("xtc_probability", 0.0),
            Map.entry("top_n_sigma", -1.0), Map.entry("length_penalty", 1.0));

    private SamplingFields() {}

    static SamplingParams parse(ObjectNode root) {
        for (var e : UNSUPPORTED_UNLESS.entrySet()) refuseUnlessOff(root, e.getKey(), e.getValue());
        JsonNode beam = root.get("use_beam_search");
        if (beam != null && !beam.isNull() && !(beam.isBoolean() && !beam.asBoolean())) unsupported("use_beam_search");

        Double temperature = number(root, "temperature", 0.0, 2.0);
        Double topP = number(root, "top_p", 0.0, 1.0);
        if (topP != null && topP == 0.0) throw ApiError.invalid("top_p must be greater than 0.", "top_p");
        Integer topK = null;
        JsonNode k = root.get("top_k");
        if (k != null && !k.isNull()) {
            long v = RequestParser.integer(k, "top_k");
            if (v < -1) throw ApiError.invalid("top_k must be 0 or more (0 or -1 = off), got " + v + ".", "top_k");
            topK = (int) Math.min(Math.max(v, 0), Integer.MAX_VALUE);
        }
        Double minP = number(root, "min_p", 0.0, 1.0);
        Double repeat = number(root, "repeat_penalty", 0.0, Double.MAX_VALUE);
        Double repetition = number(root, "repetition_penalty", 0.0, Double.MAX_VALUE);
        if (repeat != null && repetition != null && !repeat.equals(repetition)) {
            throw ApiError.invalid("repeat_penalty and repetition_penalty name the same setting; give one.", "repetition_penalty");
        }
        if (repeat == null) repeat = repetition;
        if (repeat != null && repeat == 0.0) {
            throw ApiError.invalid("repeat_penalty must be greater than 0 (1 = off).", root.has("repeat_penalty") ? "repeat_penalty" : "repetition_penalty");
        }
        Integer lastN = null;
        JsonNode ln = root.get("repeat_last_n");
        if (ln != null && !ln.isNull()) {
            long v = RequestParser.integer(ln, "repeat_last_n");
            if (v < -1) throw ApiError.invalid("repeat_last_n must be 0 or more, or -1 for the whole context, got " + v + ".", "repeat_last_n");
            lastN = (int) Math.min(v, Integer.MAX_VALUE);
        }
        Long seed = null;
        JsonNode s = root.get("seed");
        if (s != null && !s.isNull()) seed = RequestParser.integer(s, "seed");
        Double presence = number(root, "presence_penalty", -2.0, 2.0);
        Double frequency = number(root, "frequency_penalty", -2.0, 2.0);
        return new SamplingParams(temperature, topP, topK, minP, repeat, lastN, seed,
                presence == null ? 0 : presence, frequency == null ? 0 : frequency, logitBias(root.get("logit_bias")));
    }

    /** OpenAI's shape: an object from token ids (as strings) to values in [-100, 100]. */
    private static Map<Integer, Float> logitBias(JsonNode n) {
        if (n == null || n.isNull()) return Map.of();
        if (!n.isObject()) throw RequestParser.wrongType("logit_bias", "an object", n);
        Map<Integer, Float> out = new HashMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = n.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            int token;
            try {
                token = Integer.parseInt(e.getKey().strip());
            } catch (NumberFormatException ex) {
                throw ApiError.invalid("logit_bias keys must be token ids, got '" + e.getKey() + "'.", "logit_bias");
            }
            if (token < 0) throw ApiError.invalid("logit_bias names token " + token + "; token ids are 0 or more.", "logit_bias");
            JsonNode v = e.getValue();
            if (!v.isNumber()) throw RequestParser.wrongType("logit_bias." + e.getKey(), "a number", v);
            double d = v.asDouble();
            if (!(d >= -100 && d <= 100)) {
                throw ApiError.invalid("logit_bias values must be between -100 and 100, got " + d + " for token " + token + ".", "logit_bias");
            }
            out.put(token, (float) d);
        }
        return out;
    }

    private static Double number(ObjectNode root, String field, double min, double max) {
        JsonNode n = root.get(field);
        if (n == null || n.isNull()) return null;
        if (!n.isNumber()) throw RequestParser.wrongType(field, "a number", n);
        double v = n.asDouble();
        if (!(v >= min && v <= max)) {
            throw ApiError.invalid(field + " must be between " + min + " and " + max + ", got " + v + ".", field);
        }
        return v;
    }

    private static void refuseUnlessOff(ObjectNode root, String field, double off) {
        JsonNode n = root.get(field);
        if (n == null || n.isNull()) return;
        if (!n.isNumber()) throw RequestParser.wrongType(field, "a number", n);
        if (n.asDouble() != off) unsupported(field);
    }

    private static void unsupported(String field) {
        throw ApiError.invalid(field + " is not supported by this server's sampler (it applies temperature, top_k, "
                + "top_p, min_p, repeat_penalty, presence_penalty, frequency_penalty, logit_bias and seed).",
                field, "unsupported_parameter");
    }
}
