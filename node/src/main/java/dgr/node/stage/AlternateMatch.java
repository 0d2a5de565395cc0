package dgr.node.stage;

import dgr.node.tracker.StageDirectory.OfferedStage;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * Which of the stages a tracker offers may take a hop of this head's route: the same model (whole-model
 * recipe id), exactly the hop's span, the head's boundary schema, and the engine and state layout of the
 * hop's own stages, so a session moved there continues with the same bits.
 *
 * <p>The head knows where its first hop starts (its own end layer) and where the last ends (the model's
 * layer count); every other boundary it learns from the tracker's report of a stage named for that hop on
 * {@code --route}, and chains: a hop ends where the next starts. A hop whose span is still unknown gets no
 * alternates (on a 2-stage route the span is always known). The hop's engine and state layout are those
 * of its named stage as the tracker reports it; when the tracker knows none, the head's engine and the
 * first fitting stage's layout (the recipe id fixes the cache types and the span the layers, so stages of
 * one build agree).
 *
 * @param modelRecipeId the head's whole-model recipe id
 * @param headEnd       the head's end layer: where hop 1 starts
 * @param nLayers       the model's layer count: where the last hop ends
 * @param schemaId      the head's boundary schema id (one schema for the whole model)
 * @param engine        the head's engine id, what a hop's stages run when the tracker knows none of them
 */
record AlternateMatch(String modelRecipeId, int headEnd, int nLayers, String schemaId, String engine) {

    /** Per hop, the offered stages that may take it, in the tracker's order; refusals go to {@code refused}. */
    List<List<String>> alternates(RouteSpec route, List<OfferedStage> offered, Consumer<String> refused) {
        int hops = route.hops().size();
        OfferedStage[] template = new OfferedStage[hops];
        for (OfferedStage s : offered) {
            if (!s.modelRecipeId().equals(modelRecipeId)) continue;
            for (int h = 0; h < hops; h++) {
                if (template[h] == null && route.hops().get(h).addresses().contains(s.address())) template[h] = s;
            }
        }
        int[] start = new int[hops], end = new int[hops];
        java.util.Arrays.fill(start, -1);
        java.util.Arrays.fill(end, -1);
        start[0] = headEnd;
        end[hops - 1] = nLayers;
        boolean[] conflict = new boolean[hops];
        for (int h = 0; h < hops; h++) {
            if (template[h] == null) continue;
            if (start[h] >= 0 && start[h] != template[h].firstLayer() || end[h] >= 0 && end[h] != template[h].endLayer()) {
                conflict[h] = true;
                refused.accept("hop " + (h + 1) + ": its stage " + template[h].address() + " serves [" + template[h].firstLayer() + ", "
                        + template[h].endLayer() + "), not the hop's span; no alternates for it");
                continue;
            }
            start[h] = template[h].firstLayer();
            end[h] = template[h].endLayer();
        }
        for (int pass = 0; pass < hops; pass++) {
            for (int h = 0; h + 1 < hops; h++) {
                if (end[h] < 0 && start[h + 1] >= 0) end[h] = start[h + 1];
                if (start[h + 1] < 0 && end[h] >= 0) start[h + 1] = end[h];
            }
        }
        List<List<String>> out = new ArrayList<>();
        for (int h = 0; h < hops; h++) {
            List<String> fit = new ArrayList<>();
            List<String> named = route.hops().get(h).addresses();
            if (!conflict[h] && start[h] >= 0 && end[h] > start[h]) {
                OfferedStage ref = template[h];
                for (OfferedStage s : offered) {
                    if (named.contains(s.address()) || fit.contains(s.address())) continue;
                    if (!s.modelRecipeId().equals(modelRecipeId) || s.firstLayer() != start[h] || s.endLayer() != end[h]) continue;
                    String why = mismatch(s, ref);
                    if (why == null) {
                        fit.add(s.address());
                        if (ref == null) ref = s; // no named stage reported: the first fitting one sets the hop's layout
                    }
                    else refused.accept("hop " + (h + 1) + " [" + start[h] + ", " + end[h] + "): stage " + s.address() + " refused: " + why);
                }
            }
            out.add(List.copyOf(fit));
        }
        return out;
    }

    /** Why a stage of the right span may not take the hop, or null. */
    private String mismatch(OfferedStage s, OfferedStage template) {
        if (!s.boundarySchemaId().equals(schemaId)) return "boundary schema " + s.boundarySchemaId() + ", the route's is " + schemaId;
        String wantEngine = template != null ? template.engine() : engine;
        if (!s.engine().equals(wantEngine)) return "engine " + s.engine() + ", the hop's is " + wantEngine;
        if (template != null && !s.stateLayoutId().equals(template.stateLayoutId())) {
            return "state layout " + s.stateLayoutId() + ", the hop's is " + template.stateLayoutId();
        }
        return null;
    }
}
