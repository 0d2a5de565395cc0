package dgr.engine.llama;

/**
 * Which experts a row runs and with what weight, as llama.cpp's {@code build_moe_ffn} decides with
 * softmax gating: the softmax of the router's scores, the {@code used} most probable experts (the
 * lower index first on a tie), their probabilities divided by their sum where the architecture
 * renormalises (the sum clamped below at f16's smallest normal, as llama.cpp clamps it), and times
 * the file's scale unless that is 0 or 1.
 * A row's choice depends on its own scores only, so it is the same in any batch.
 */
final class ExpertRouting {
    /** llama.cpp's lower bound on the sum of the chosen probabilities. */
    private static final float MIN_SUM = 6.103515625e-5f;

    private ExpertRouting() {}

    /**
     * Routes one row: scores {@code scores[so .. so+count)}, chosen experts into
     * {@code chosen[co .. co+used)} (most probable first) and their weights into {@code weights[co ..]};
     * {@code probs} is scratch of at least {@code count} floats.
     */
    static void route(float[] scores, int so, int count, int used, boolean normalise, float scale, float[] probs,
                      int[] chosen, float[] weights, int co) {
        // Softmax as ggml computes it: exp of the difference from the maximum, the sum in double, one scale.
        float max = Float.NEGATIVE_INFINITY;
        for (int i = 0; i < count; i++) max = Math.max(max, scores[so + i]);
        double sum = 0;
        for (int i = 0; i < count; i++) {
            float p = (float) Math.exp(scores[so + i] - max);
            probs[i] = p;
            sum += p;
        }
        float inv = (float) (1.0 / sum);
        for (int i = 0; i < count; i++) probs[i] *= inv;
        // The used highest, by selection: counts are small (8 to 128) and used smaller still.
        for (int k = 0; k < used; k++) {
            int best = -1;
            for (int i = 0; i < count; i++) {
                if (taken(chosen, co, k, i)) continue;
                if (best < 0 || probs[i] > probs[best]) best = i;
            }
            chosen[co + k] = best;
        }
        float div = 1f;
        if (normalise) {
            double chosenSum = 0;
            for (int k = 0; k < used; k++) chosenSum += probs[chosen[co + k]];
            div = Math.max((float) chosenSum, MIN_SUM);
        }
        boolean scaled = scale != 0f && scale != 1f;
        for (int k = 0; k < used; k++) {
            float w = normalise ? probs[chosen[co + k]] / div : probs[chosen[co + k]];
            weights[co + k] = scaled ? w * scale : w;
        }
    }

    private static boolean taken(int[] chosen, int co, int k, int expert) {
        for (int j = 0; j < k; j++) if (chosen[co + j] == expert) return true;
        return false;
    }
}
