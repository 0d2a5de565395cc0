package dgr.node;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dgr.engine.BoundarySchema;
import dgr.engine.Engine;
import dgr.engine.Recipe;
import dgr.engine.StateLayout;
import dgr.node.metrics.Load;
import dgr.node.model.ConcurrencyLimit;
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
        long workspace = 0;
        int uncounted = 0;
        int running = 0;
        int waiting = 0;
        for (ServedModel m : models.all()) {
            Engine e = m.engine();
            Recipe r = e.recipe();
            SchedulerConfig sc = m.scheduler().config();
            Load load = m.load();
            ObjectNode o = list.addObject();
            o.put("id", m.id());
            // Flat per-model fields clients (dgr bench's HTTP target, routers) read without knowing
            // the nested layout; the objects below carry the details.
            o.put("architecture", r.architecture());
            o.put("artifact_sha256", r.artifactSha256());
            o.put("recipe_id", r.id());
            o.put("vocab_size", m.vocabSize());
            o.put("context_length", r.contextLength());
            o.put("max_batch_rows", sc.maxBatchSessions());
            ConcurrencyLimit limit = m.concurrencyLimit();
            ObjectNode lim = o.putObject("concurrency_limit");
            lim.put("max_running_sessions", limit.maxRunningSessions());
            lim.put("source", limit.sourceName());
            lim.put("detail", limit.detail());
            ObjectNode engine = o.putObject("engine");
            engine.put("id", e.id().toString());
            engine.put("name", e.id().name());
            engine.put("version", e.id().version());
            ObjectNode features = engine.putObject("features");
            features.put("mixed_prefill_decode", e.features().mixedPrefillDecode());
            features.put("max_rows", e.features().maxRows());
            features.put("threads", e.features().threads());
            // What the SIMD kernels' memory access has on this machine (activation alignment, huge
            // pages, software prefetch): each moves batch-1 speed by up to a third.
            engine.put("kernel_memory", dgr.engine.Engines.kernelMemoryReport());
            // Working buffers beside weights and state (activations, scratch, a mixture of
            // experts' gathers, which grow with the batches run so far); null where uncounted.
            long ws = e.workspaceBytes();
            if (ws >= 0) {
                engine.put("workspace_bytes", ws);
                workspace += ws;
            } else {
                engine.putNull("workspace_bytes");
                uncounted++;
            }
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
            stateBytes(layout, e.stateLayout(), r.contextLength());
            cacheTypes(layout, e.stateLayout());
            BoundarySchema b = e.boundarySchema();
            ObjectNode schema = o.putObject("boundary_schema");
            schema.put("id", b.id());
            schema.put("architecture", b.architecture());
            schema.put("row_width", b.rowWidth());
            schema.put("dtype", b.dtype());
            schema.put("version", b.version());
            ObjectNode sched = o.putObject("scheduler");
            sched.put("policy", sc.policy().name().toLowerCase(java.util.Locale.ROOT));
            sched.put("max_batch_rows", sc.maxBatchSessions());
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
        memory.put("workspace_bytes", workspace);
        memory.put("workspace_uncounted_models", uncounted);
        root.set("saturation", saturation);
        root.set("load", load(new Load(running, waiting, used, budget)));
        return root;
    }

    /**
     * A llama KV cache grows linearly in tokens, so one number describes it. A deepseek4 state does
     * not (the window stops growing at n_swa, compressed entries appear every 4 or 128 tokens, the
     * compressor rings are there from the start): then {@code bytes_per_token} is null and the
     * sampled {@code bytes_for_tokens} table is what a planner should use.
     */
    static void stateBytes(ObjectNode layout, StateLayout l, int contextLength) {
        int[] at = {0, 1, 128, 1024, contextLength};
        long one = l.bytesForTokens(1);
        boolean linear = l.bytesForTokens(0) == 0;
        for (int n : at) linear &= l.bytesForTokens(n) == one * n;
        linear &= l.bytesForTokens(contextLength / 3) == one * (contextLength / 3);
        layout.put("linear_in_tokens", linear);
        if (linear) layout.put("bytes_per_token", one);
        else layout.putNull("bytes_per_token");
        ObjectNode table = layout.putObject("bytes_for_tokens");
        for (int n : at) table.put(Integer.toString(n), l.bytesForTokens(n));
    }

    /**
     * The K/V cache types in force ({@code --cache-type-k/-v}) and the state bytes per token each
     * type would take on this span (K and V both of it), so a planner can weigh sessions against
     * precision; empty for state with no choice of type (DeepSeek-V4).
     */
    static void cacheTypes(ObjectNode layout, StateLayout l) {
        layout.put("cache_type_k", l.cacheTypes().k().flag());
        layout.put("cache_type_v", l.cacheTypes().v().flag());
        ObjectNode by = layout.putObject("bytes_per_token_by_cache_type");
        l.bytesPerTokenByCacheType().forEach((t, b) -> by.put(t.flag(), b));
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
