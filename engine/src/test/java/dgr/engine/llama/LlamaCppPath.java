package dgr.engine.llama;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dgr.engine.Batch;
import dgr.engine.Engine;
import dgr.engine.ForwardResult;
import dgr.engine.StateSlot;
import java.util.Arrays;

/**
 * llama.cpp's greedy continuation of {@code prompt} on one file and its top-1 − top-2 logit margin
 * at each step, as {@code tools/llamacpp/compare.mjs} prints them; the cross-check tests replay
 * the path teacher-forced through dgr and compare.
 */
record LlamaCppPath(int[] prompt, int[] tokens, double[] margins) {

    /** The fixed prompt every recorded path starts from (ids of the 1025-token GPT-2 subset). */
    static final int[] PROMPT = {39, 695, 78, 995, 11, 352, 17, 18, 284, 74, 641};

    LlamaCppPath {
        if (tokens.length != margins.length) throw new IllegalArgumentException("one margin per token");
    }

    /** dgr's logits after the last prompt position and after each path token but the last, in one forward. */
    float[][] teacherForced(Engine e) {
        Batch batch = new Batch(e.features().maxRows(), e.boundarySchema().rowWidth());
        StateSlot slot = e.openSlot();
        int n = prompt.length + tokens.length - 1;
        for (int p = 0; p < n; p++) batch.addToken(slot, p, p < prompt.length ? prompt[p] : tokens[p - prompt.length], p >= prompt.length - 1);
        ForwardResult r = e.forward(batch);
        float[][] rows = new float[tokens.length][];
        for (int k = 0; k < tokens.length; k++) {
            int o = r.outputOffset(prompt.length - 1 + k);
            rows[k] = Arrays.copyOfRange(r.outputArray(), o, o + r.outputWidth());
        }
        slot.close();
        return rows;
    }

    /**
     * Every step's margin within {@code tolerance} of llama.cpp's, and dgr's top token llama.cpp's
     * wherever llama.cpp's margin exceeds the tolerance (below it the two may order a near-tie
     * either way).
     */
    void assertMatches(Engine e, double tolerance) {
        assertMatches(teacherForced(e), tolerance);
    }

    /**
     * The same logits as {@link #teacherForced}, but the prompt in one forward and then one token
     * per forward, as decoding runs: each step's slot has given back what sliding-window layers no
     * longer attend to.
     */
    float[][] stepwise(Engine e) {
        return stepwise(e, prompt.length);
    }

    /** {@link #stepwise} with the prompt fed {@code chunk} positions per forward. */
    float[][] stepwise(Engine e, int chunk) {
        Batch batch = new Batch(e.features().maxRows(), e.boundarySchema().rowWidth());
        float[][] rows = new float[tokens.length][];
        try (StateSlot slot = e.openSlot()) {
            for (int p = 0; p < prompt.length; p++) {
                batch.addToken(slot, p, prompt[p], p == prompt.length - 1);
                if (p < prompt.length - 1 && batch.size() == chunk) {
                    e.forward(batch);
                    batch.clear();
                }
            }
            for (int k = 0; k < tokens.length; k++) {
                if (k > 0) {
                    batch.clear();
                    batch.addToken(slot, prompt.length + k - 1, tokens[k - 1], true);
                }
                ForwardResult r = e.forward(batch);
                int o = r.outputOffset(batch.size() - 1);
                rows[k] = Arrays.copyOfRange(r.outputArray(), o, o + r.outputWidth());
            }
        }
        return rows;
    }

    void assertMatches(float[][] rows, double tolerance) {
        for (int k = 0; k < tokens.length; k++) {
            float[] l = rows[k];
            int top = TinyModels.argmax(l, 0, l.length), second = top == 0 ? 1 : 0;
            for (int i = 0; i < l.length; i++) if (i != top && l[i] > l[second]) second = i;
            assertThat((double) (l[top] - l[second])).as("step %d margin", k).isCloseTo(margins[k], within(tolerance));
            if (margins[k] > tolerance) assertThat(top).as("step %d token", k).isEqualTo(tokens[k]);
        }
    }
}
