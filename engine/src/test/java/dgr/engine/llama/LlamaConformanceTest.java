package dgr.engine.llama;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dgr.engine.Engine;
import dgr.engine.EngineOptions;
import dgr.engine.ForwardResult;
import dgr.engine.StateSlot;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** DESIGN.md contract 2: every llama-tiny type, both engines, against the float64 numpy reference. */
class LlamaConformanceTest {

    static Stream<Arguments> cases() {
        List<Arguments> out = new ArrayList<>();
        for (String t : TinyModels.TYPES) {
            for (EngineOptions.Kind k : TinyModels.KINDS) out.add(Arguments.of(t, k));
        }
        return out.stream();
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("cases")
    void logitsWithinToleranceAndGreedyTokensMatchReference(String type, EngineOptions.Kind kind) throws Exception {
        JsonNode ref = TinyModels.ref(type);
        float[] want = TinyModels.refLogits(type);
        // java-q8 rounds activations to 8 bits for Q4_0/1, Q5_0/1, Q8_0 and the K-quants as llama.cpp does: the
        // README's bound for such engines, 5e-2 × max(1, max|logit|), which covers llama.cpp with
        // about 2x margin. (Measured: 0.008–0.016; its greedy paths still equal numpy's.)
        boolean rounds = kind == EngineOptions.Kind.Q8 && roundsAny(ref);
        double tol = rounds ? 5e-2 * Math.max(1, maxAbs(want)) : ref.path("tolerance").path("max_abs_logit_diff_vs_numpy").asDouble();
        JsonNode np = ref.path("numpy_f64");
        int[] prompt = ints(ref.path("prompt").path("tokens"));
        int[] greedy = ints(np.path("greedy"));
        int reliable = np.path("greedy_reliable_prefix").asInt();
        try (Engine e = TinyModels.load(type, kind, 2, 32); StateSlot slot = e.openSlot()) {
            int vocab = e.info().vocabSize();
            assertThat(want).hasSize(prompt.length * vocab);
            ForwardResult r = TinyModels.prefill(e, slot, prompt);
            double worst = 0;
            int worstAt = -1;
            for (int p = 0; p < prompt.length; p++) {
                float[] a = r.outputArray();
                int off = r.outputOffset(p);
                for (int i = 0; i < vocab; i++) {
                    double d = Math.abs(a[off + i] - want[p * vocab + i]);
                    if (d > worst) { worst = d; worstAt = p * vocab + i; }
                }
            }
            assertThat(worst).as("%s %s: max |logit - numpy| at position %d token %d", type, kind,
                    worstAt / vocab, worstAt % vocab).isLessThanOrEqualTo(tol);
            if (rounds) {
                // And against llama.cpp's own logits (its top 10 per position), under the same bound.
                JsonNode top = ref.path("llama_cpp").path("top10");
                double worstCpp = 0;
                for (int p = 0; p < top.size(); p++) {
                    for (JsonNode pair : top.get(p)) {
                        worstCpp = Math.max(worstCpp, Math.abs(r.outputArray()[r.outputOffset(p) + pair.get(0).asInt()] - pair.get(1).asDouble()));
                    }
                }
                assertThat(top.size()).isEqualTo(prompt.length);
                assertThat(worstCpp).as("%s %s: max |logit - llama.cpp| over its top 10", type, kind).isLessThanOrEqualTo(tol);
            }

            int[] got = new int[greedy.length];
            int next = TinyModels.argmax(r.outputArray(), r.outputOffset(prompt.length - 1), vocab);
            for (int i = 0; i < greedy.length; i++) {
                got[i] = next;
                if (i + 1 < greedy.length) {
                    ForwardResult d = TinyModels.prefill(e, slot, new int[] {next});
                    next = TinyModels.argmax(d.outputArray(), d.outputOffset(0), vocab);
                }
            }
            // An engine that rounds activations may leave numpy's path only at a step whose top-1
            // margin is within twice its own measured distance from numpy (there the argmax can
            // honestly differ: Q3_K_M's step 12 has 0.006, where java-q8 picks numpy's second token;
            // llama.cpp happens to keep numpy's there); the paths differ from then on. Anywhere
            // else a different token fails.
            JsonNode margins = np.path("greedy_top1_margin");
            for (int i = 0; i < reliable; i++) {
                if (rounds && got[i] != greedy[i] && margins.get(i).asDouble() <= 2 * worst) break;
                assertThat(got[i]).as("%s %s greedy step %d of %s", type, kind, i, java.util.Arrays.toString(got))
                        .isEqualTo(greedy[i]);
            }
            assertThat(slot.length()).isEqualTo(prompt.length + greedy.length - 1);
            assertThat(slot.bytes()).isEqualTo(e.stateLayout().bytesForTokens(slot.length()));
        }
    }

    /** Whether the file has a matrix type java-q8 multiplies with 8-bit activations. */
    private static boolean roundsAny(JsonNode ref) {
        for (String t : new String[] {"Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K"}) {
            if (ref.path("tensor_type_counts").has(t)) return true;
        }
        return false;
    }

    private static double maxAbs(float[] a) {
        double m = 0;
        for (float v : a) m = Math.max(m, Math.abs(v));
        return m;
    }

    private static int[] ints(JsonNode n) {
        int[] a = new int[n.size()];
        for (int i = 0; i < a.length; i++) a[i] = n.get(i).asInt();
        return a;
    }
}
