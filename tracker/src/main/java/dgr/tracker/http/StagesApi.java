package dgr.tracker.http;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dgr.tracker.Tracker;
import dgr.tracker.registry.RegisteredNode;
import dgr.tracker.registry.StageSpan;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;

/**
 * {@code GET /v1/stages?recipe=R[&first_layer=A&end_layer=B]} (node token): the healthy later stages of
 * the model with whole-model recipe id R that heartbeat here, those serving exactly {@code [A, B)} when
 * given, most headroom first. A head with {@code --tracker} asks it every second for the alternates of
 * its hops (docs/stages.md, "Alternates from the tracker"); only cluster members may learn stage addresses.
 */
final class StagesApi {
    /** A recipe id is 16 hex digits; anything much longer is no recipe id. */
    private static final int MAX_RECIPE_CHARS = 64;

    private final Tracker tracker;
    private final ObjectMapper mapper;

    StagesApi(Tracker tracker, ObjectMapper mapper) {
        this.tracker = tracker;
        this.mapper = mapper;
    }

    void stages(ServerRequest req, ServerResponse res) {
        NodesApi.requireNodeToken(tracker, req);
        String recipe = req.query().first("recipe").orElse(null);
        if (recipe == null || recipe.isBlank()) {
            throw ApiFailure.invalid("The query parameter 'recipe' is required: GET /v1/stages?recipe=MODEL_RECIPE_ID"
                    + "[&first_layer=A&end_layer=B].", "recipe");
        }
        if (recipe.length() > MAX_RECIPE_CHARS) {
            throw ApiFailure.invalid("'recipe' is " + recipe.length() + " characters; a recipe id has at most " + MAX_RECIPE_CHARS + ".", "recipe");
        }
        Integer first = layer(req, "first_layer"), end = layer(req, "end_layer");
        if ((first == null) != (end == null)) {
            throw ApiFailure.invalid("Give both 'first_layer' and 'end_layer' (the span [A, B)), or neither.",
                    first == null ? "first_layer" : "end_layer");
        }
        if (first != null && end <= first) {
            throw ApiFailure.invalid("'end_layer' (" + end + ") must be above 'first_layer' (" + first + ").", "end_layer");
        }
        ObjectNode root = JsonNodeFactory.instance.objectNode();
        root.put("object", "list");
        root.put("recipe_id", recipe);
        ArrayNode data = root.putArray("data");
        for (RegisteredNode n : tracker.registry().stages(recipe, first == null ? -1 : first, end == null ? -1 : end)) {
            StageSpan s = n.stage();
            ObjectNode o = data.addObject();
            o.put("node_id", n.id());
            o.put("address", s.address());
            o.putArray("span").add(s.firstLayer()).add(s.endLayer());
            o.put("n_layers", s.nLayers());
            o.put("model_recipe_id", s.modelRecipeId());
            o.put("boundary_schema_id", s.boundarySchemaId());
            o.put("state_layout_id", s.stateLayoutId());
            o.put("engine", s.engine());
            o.put("sessions", s.sessions());
            o.put("max_batch_rows", s.maxBatchRows());
            o.put("headroom", s.headroom());
            o.put("last_heartbeat", n.lastReport() == null ? null : n.lastReport().toString());
        }
        HttpIo.sendJson(res, mapper, 200, root);
    }

    private static Integer layer(ServerRequest req, String name) {
        String v = req.query().first(name).orElse(null);
        if (v == null) return null;
        try {
            int l = Integer.parseInt(v.trim());
            if (l < 0) throw new NumberFormatException();
            return l;
        } catch (NumberFormatException e) {
            throw ApiFailure.invalid("'" + name + "' must be a layer number (an integer >= 0), got '"
                    + (v.length() > 32 ? v.substring(0, 32) + "..." : v) + "'.", name);
        }
    }
}
