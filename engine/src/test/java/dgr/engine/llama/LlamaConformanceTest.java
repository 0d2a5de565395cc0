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
            for (EngineOptions.Kind k : EngineOptions.Kind.values()) out.add(Arguments.of(t, k));
        }
        return out.stream();
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("cases")
    void logitsWithinToleranceAndGreedyTokensMatchReference(String type, EngineOptions.Kind kind) throws Exception {
        JsonNode ref = TinyModels.ref(type);
        float[] want = TinyModels.refLogits(type);
        double tol = ref.path("tolerance").path("max_abs_logit_diff_vs_numpy").asDouble();
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

            int[] got = new int[greedy.length];
            int next = TinyModels.argmax(r.outputArray(), r.outputOffset(prompt.length - 1), vocab);
            for (int i = 0; i < greedy.length; i++) {
                got[i] = next;
                if (i + 1 < greedy.length) {
                    ForwardResult d = TinyModels.prefill(e, slot, new int[] {next});
                    next = TinyModels.argmax(d.outputArray(), d.outputOffset(0), vocab);
                }
            }
            for (int i = 0; i < reliable; i++) {
                assertThat(got[i]).as("%s %s greedy step %d of %s", type, kind, i, java.util.Arrays.toString(got))
                        .isEqualTo(greedy[i]);
            }
            assertThat(slot.length()).isEqualTo(prompt.length + greedy.length - 1);
            assertThat(slot.bytes()).isEqualTo(e.stateLayout().bytesForTokens(slot.length()));
        }
    }

    private static int[] ints(JsonNode n) {
        int[] a = new int[n.size()];
        for (int i = 0; i < a.length; i++) a[i] = n.get(i).asInt();
        return a;
    }
}
