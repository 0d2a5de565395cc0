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
