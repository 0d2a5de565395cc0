package dgr.engine.llama;

/**
 * Which experts a row runs and with what weight, as llama.cpp's {@code build_moe_ffn} decides: the
 * softmax (or, DeepSeek-V3, the sigmoids) of the router's scores, the {@code used} most probable experts (the
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
     * {@code probs} and {@code sel} are scratch of at least {@code count} floats. The gating as
     * {@link LlamaConfig.Experts.Gating} says; a {@code bias}, where
     * given, is added to the probabilities to choose but not to weigh; with {@code groups > 1} only
     * experts of the {@code groupsUsed} groups whose two best (biased) probabilities sum highest
     * are candidates.
     */
    static void route(float[] scores, int so, int count, int used, boolean normalise, float scale, LlamaConfig.Experts.Gating gating,
                      float[] bias, int groups, int groupsUsed, float[] probs, float[] sel, int[] chosen, float[] weights, int co) {
        if (gating == LlamaConfig.Experts.Gating.SOFTMAX_WEIGHT) {
            // gpt-oss: the raw scores choose; the chosen ones' softmax weighs.
            System.arraycopy(scores, so, probs, 0, count);
        } else if (gating == LlamaConfig.Experts.Gating.SIGMOID) {
            // ggml's sigmoid, 1 / (1 + e^-x), in float.
            for (int i = 0; i < count; i++) probs[i] = 1f / (1f + (float) Math.exp(-scores[so + i]));
        } else {
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
        }
        for (int i = 0; i < count; i++) sel[i] = bias == null ? probs[i] : probs[i] + bias[i];
        if (groups > 1) maskGroups(sel, count, groups, groupsUsed);
        // The used highest, by selection: counts are small (8 to 256) and used smaller still.
        for (int k = 0; k < used; k++) {
            int best = -1;
            for (int i = 0; i < count; i++) {
                if (taken(chosen, co, k, i)) continue;
                if (best < 0 || sel[i] > sel[best]) best = i;
            }
            chosen[co + k] = best;
        }
        if (gating == LlamaConfig.Experts.Gating.SOFTMAX_WEIGHT) {
            // ggml's softmax over the chosen scores: exp of the difference from their maximum (the
            // first, the highest), the sum in double, one scale.
            float max = probs[chosen[co]];
            double sum = 0;
            for (int k = 0; k < used; k++) {
                float p = (float) Math.exp(probs[chosen[co + k]] - max);
                weights[co + k] = p;
                sum += p;
            }
            float inv = (float) (1.0 / sum);
            for (int k = 0; k < used; k++) weights[co + k] *= inv;
            return;
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

    /**
     * DeepSeek-V3's group-limited choice as llama.cpp makes it: each group of {@code count/groups}
     * consecutive experts scores the sum of its two highest values, the {@code groupsUsed} best
     * groups (the lower index first on a tie) stay, every other expert becomes −∞.
     */
    private static void maskGroups(float[] sel, int count, int groups, int groupsUsed) {
        int per = count / groups;
        long keep = 0; // groups <= 64 (LlamaConfig checks): a bit per group, so nothing is allocated per token
        for (int k = 0; k < groupsUsed; k++) {
            int best = -1;
            float bestScore = 0;
            for (int g = 0; g < groups; g++) {
                if ((keep & (1L << g)) != 0) continue;
                float score = topTwo(sel, g * per, (g + 1) * per);
                if (best < 0 || score > bestScore) {
                    best = g;
                    bestScore = score;
                }
            }
            keep |= 1L << best;
        }
        for (int g = 0; g < groups; g++) {
            if ((keep & (1L << g)) == 0) for (int i = g * per; i < (g + 1) * per; i++) sel[i] = Float.NEGATIVE_INFINITY;
        }
    }

    /** The sum of the two highest of {@code v[from .. to)}. */
    private static float topTwo(float[] v, int from, int to) {
        float a = Float.NEGATIVE_INFINITY, b = Float.NEGATIVE_INFINITY;
        for (int i = from; i < to; i++) {
            if (v[i] > a) {
                b = a;
                a = v[i];
            } else if (v[i] > b) {
                b = v[i];
            }
        }
        return a + b;
    }

    private static boolean taken(int[] chosen, int co, int k, int expert) {
        for (int j = 0; j < k; j++) if (chosen[co + j] == expert) return true;
        return false;
    }
}
