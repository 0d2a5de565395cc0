package dgr.tracker.registry;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Reads a dgr node's capability report ({@code GET /v1/capabilities}, also the body of its heartbeat)
 * into what routing needs per model. One reader for both ways a report arrives, pushed and pulled.
 */
public final class CapabilityReports {
    private CapabilityReports() {}

    /** A report that cannot be routed by: the message names the field. */
    public static final class BadReport extends RuntimeException {
        private final String field;

        BadReport(String message, String field) {
            super(message, null, false, false);
            this.field = field;
        }

        public String field() { return field; }
    }

    /** The node id the report names ({@code node_id}). */
    public static String nodeId(JsonNode caps) {
        JsonNode id = caps.path("node_id");
        if (!id.isTextual() || id.asText().isBlank()) {
            throw new BadReport("'capabilities.node_id' must be a non-empty string.", "capabilities.node_id");
        }
        return id.asText();
    }

    /** The models a report offers, by id; empty while the node is still loading ({@code ready: false}). */
    public static Map<String, ModelCapacity> models(JsonNode caps) {
        if (!caps.isObject()) throw new BadReport("'capabilities' must be the node's capability report (an object).", "capabilities");
        Map<String, ModelCapacity> models = new LinkedHashMap<>();
        if (!caps.path("ready").asBoolean(false)) return models;
        for (JsonNode m : caps.path("models")) {
            ModelCapacity c = capacity(m, caps.path("saturation"));
            models.put(c.model(), c);
        }
        return models;
    }

    /** Longest id, address or schema string a stage report may carry: reports are bounded like bodies. */
    private static final int MAX_FIELD_CHARS = 256;

    /**
     * The span a later stage reports (its {@code stage} object, role {@code middle} or {@code last}), or null
     * for a node that is no later stage (a whole-model node, a head) or that has no address heads can dial.
     */
    public static StageSpan stage(JsonNode caps) {
        JsonNode s = caps.path("stage");
        if (!s.isObject()) return null;
        String role = s.path("role").asText("");
        if (!role.equals("middle") && !role.equals("last")) return null;
        if (!s.path("address").isTextual()) return null;
        String address = field(s, "address");
        int colon = address.lastIndexOf(':');
        if (colon <= 0 || !address.substring(colon + 1).matches("[0-9]{1,5}")) {
            throw new BadReport("'capabilities.stage.address' must be HOST:PORT, got '" + address + "'.", "capabilities.stage.address");
        }
        JsonNode span = s.path("span");
        if (!span.isArray() || span.size() != 2 || !span.get(0).canConvertToInt() || !span.get(1).canConvertToInt()) {
            throw new BadReport("'capabilities.stage.span' must be [first_layer, end_layer].", "capabilities.stage.span");
        }
        int first = span.get(0).asInt(), end = span.get(1).asInt(), n = s.path("n_layers").asInt(-1);
        if (first < 1 || end <= first || end > n) {
            throw new BadReport("'capabilities.stage.span' [" + first + ", " + end + ") is not a later span of a model of "
                    + n + " layers.", "capabilities.stage.span");
        }
        return new StageSpan(field(s, "model_recipe_id"), first, end, n, field(s.path("boundary_schema"), "id", "boundary_schema.id"),
                field(s.path("state_layout"), "id", "state_layout.id"), field(s.path("engine"), "id", "engine.id"), address,
                Math.max(0, s.path("sessions").asInt(0)), Math.max(0, s.path("max_batch_rows").asInt(0)));
    }

    private static String field(JsonNode o, String name) { return field(o, name, name); }

    private static String field(JsonNode o, String name, String path) {
        JsonNode v = o.path(name);
        if (!v.isTextual() || v.asText().isBlank() || v.asText().length() > MAX_FIELD_CHARS) {
            throw new BadReport("'capabilities.stage." + path + "' must be a non-empty string of at most " + MAX_FIELD_CHARS
                    + " characters.", "capabilities.stage." + path);
        }
        return v.asText();
    }

    /**
     * Whether a report lacks what routing by measured capacity uses: a model whose limit comes from a
     * saturation recommendation but whose recommendation (with its measured speeds) is not in the report,
     * or a model without recipe or engine (then nothing can resume on it).
     */
    public static boolean incomplete(Map<String, ModelCapacity> models) {
        for (ModelCapacity m : models.values()) {
            if (m.recipeId() == null || m.engine() == null || (m.measured() && !m.speedMeasured())) return true;
        }
        return false;
    }

    private static ModelCapacity capacity(JsonNode m, JsonNode saturation) {
        JsonNode idNode = m.path("id");
        if (!idNode.isTextual() || idNode.asText().isBlank()) {
            throw new BadReport("'capabilities.models[].id' must be a non-empty string.", "capabilities.models[].id");
        }
        String id = idNode.asText();
        JsonNode limit = m.path("concurrency_limit");
        int max = limit.path("max_running_sessions").asInt(0);
        if (max < 1) {
            throw new BadReport("Model '" + id + "': concurrency_limit.max_running_sessions must be an integer >= 1.",
                    "capabilities.models[].concurrency_limit");
        }
        String source = limit.path("source").asText("default");
        boolean measured = "saturation".equals(source);
        JsonNode rec = measured ? recommendation(saturation, m.path("recipe_id").asText("")) : null;
        return new ModelCapacity(id, m.path("recipe_id").asText(null), max, measured, source,
                m.path("load").path("running").asInt(0), m.path("load").path("waiting").asInt(0),
                m.path("context_length").asInt(0), m.path("engine").path("id").asText(null),
                rec == null ? 0 : rec.path("expected_per_session_output_throughput").asDouble(0),
                rec == null ? 0 : rec.path("expected_output_throughput").asDouble(0));
    }

    /** The recommendation for this recipe in the report's saturation section, or null. */
    private static JsonNode recommendation(JsonNode saturation, String recipeId) {
        for (JsonNode r : saturation.path("recommendations")) {
            if (recipeId.equals(r.path("recipe_id").asText())) return r;
        }
        return null;
    }
}
