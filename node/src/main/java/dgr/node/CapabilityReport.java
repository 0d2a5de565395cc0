package dgr.node;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dgr.engine.BoundarySchema;
import dgr.engine.Engine;
import dgr.engine.Recipe;
import dgr.node.metrics.Load;
import dgr.node.model.ModelRegistry;
import dgr.node.model.ServedModel;
import dgr.runtime.SchedulerConfig;

/**
 * What a node tells the tracker (DESIGN.md, "capability report"): its engines, recipes with layer
 * spans, state layouts, boundary schemas, state budget, the saturation recommendations it loaded,
 * and its live load. Static parts come from the loaded engines; load is read at each call.
 */
public final class CapabilityReport {
    private final String nodeId;
    private final String version;
    private final ModelRegistry models;
    private final ObjectNode saturation;

    public CapabilityReport(String nodeId, String version, ModelRegistry models, ObjectNode saturation) {
        this.nodeId = nodeId;
        this.version = version;
        this.models = models;
        this.saturation = saturation;
    }

    public ObjectNode build() {
        JsonNodeFactory f = JsonNodeFactory.instance;
        ObjectNode root = f.objectNode();
        root.put("node_id", nodeId);
        root.put("dgr_version", version);
        root.put("ready", models.ready());
        ArrayNode list = root.putArray("models");
        long budget = 0;
        long used = 0;
        int running = 0;
        int waiting = 0;
        for (ServedModel m : models.all()) {
            Engine e = m.engine();
            Recipe r = e.recipe();
            SchedulerConfig sc = m.scheduler().config();
            Load load = m.load();
            ObjectNode o = list.addObject();
            o.put("id", m.id());
            o.put("architecture", r.architecture());
            o.put("artifact_sha256", r.artifactSha256());
            ObjectNode engine = o.putObject("engine");
            engine.put("id", e.id().toString());
            engine.put("name", e.id().name());
            engine.put("version", e.id().version());
            ObjectNode features = engine.putObject("features");
            features.put("mixed_prefill_decode", e.features().mixedPrefillDecode());
            features.put("max_rows", e.features().maxRows());
            features.put("threads", e.features().threads());
            ObjectNode recipe = o.putObject("recipe");
            recipe.put("id", r.id());
            recipe.put("architecture", r.architecture());
            recipe.put("artifact_sha256", r.artifactSha256());
            ArrayNode span = recipe.putArray("layer_span");
            span.add(r.firstLayer());
            span.add(r.endLayer());
            recipe.put("n_layers", r.nLayers());
            recipe.put("context_length", r.contextLength());
            recipe.put("state_dtype", r.stateDtype());
            recipe.put("rope", r.rope());
            ObjectNode layout = o.putObject("state_layout");
            layout.put("id", e.stateLayout().id());
            layout.put("description", e.stateLayout().describe());
            layout.put("bytes_per_token", e.stateLayout().bytesForTokens(1));
            BoundarySchema b = e.boundarySchema();
            ObjectNode schema = o.putObject("boundary_schema");
            schema.put("id", b.id());
            schema.put("architecture", b.architecture());
            schema.put("row_width", b.rowWidth());
            schema.put("dtype", b.dtype());
            schema.put("version", b.version());
            ObjectNode sched = o.putObject("scheduler");
            sched.put("policy", sc.policy().name().toLowerCase(java.util.Locale.ROOT));
            sched.put("max_batch_rows", sc.maxBatchRows());
            sched.put("max_batch_tokens", sc.maxBatchTokens());
            sched.put("max_waiting_sessions", sc.maxWaitingSessions());
            sched.put("state_budget_bytes", sc.stateBudgetBytes());
            o.set("load", load(load));
            budget += load.stateBudgetBytes();
            used += load.stateBytesUsed();
            running += load.running();
            waiting += load.waiting();
        }
        ObjectNode memory = root.putObject("memory");
        memory.put("state_budget_bytes", budget);
        memory.put("state_bytes_used", used);
        memory.put("heap_max_bytes", Runtime.getRuntime().maxMemory());
        root.set("saturation", saturation);
        root.set("load", load(new Load(running, waiting, used, budget)));
        return root;
    }

    private static ObjectNode load(Load l) {
        ObjectNode o = JsonNodeFactory.instance.objectNode();
        o.put("running", l.running());
        o.put("waiting", l.waiting());
        o.put("state_bytes_used", l.stateBytesUsed());
        o.put("state_bytes_budget", l.stateBudgetBytes());
        o.put("state_occupancy", l.stateBudgetBytes() == 0 ? 0.0 : (double) l.stateBytesUsed() / l.stateBudgetBytes());
        return o;
    }
}
