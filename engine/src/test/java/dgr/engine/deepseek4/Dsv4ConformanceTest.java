package dgr.engine.deepseek4;

import static org.assertj.core.api.Assertions.assertThat;

import dgr.engine.Batch;
import dgr.engine.EngineOptions;
import dgr.engine.StateSlot;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * dsv4-tiny against the float64 numpy reference (shared/conformance README: every logit at every
 * one of the 225 positions within 1e-3·max(1, max|logit|), and the 16 greedy tokens equal), on
 * every engine: the file's matrices are F16, which java-q8 multiplies with float32 activations as
 * java-simd does, so all three keep the float32 bound.
 */
class Dsv4ConformanceTest {
    @ParameterizedTest
    @EnumSource(value = EngineOptions.Kind.class, names = {"SCALAR", "SIMD", "Q8"})
    void everyPromptLogitMatchesTheFloat64ReferenceAndGreedyTokensAreEqual(EngineOptions.Kind kind) {
        try (Dsv4Engine engine = Dsv4Engine.load(Dsv4Fixture.resource(Dsv4Fixture.MODEL), Dsv4Fixture.options(256).withKind(kind))) {
            check(engine, Dsv4Fixture.refJson());
        }
    }

    private static void check(Dsv4Engine engine, String json) {
        int[] prompt = Dsv4Fixture.intArray(json, "prompt", "tokens");
        int[] greedy = Dsv4Fixture.intArray(json, "numpy_f64", "greedy");
        double tol = Dsv4Fixture.number(json, "tolerance", "max_abs_logit_diff_vs_numpy");
        float[] ref = Dsv4Fixture.refLogits();
        int vocab = engine.info().vocabSize();
        assertThat(prompt).hasSize(225);
        assertThat(ref).hasSize(prompt.length * vocab);

        StateSlot slot = engine.openSlot();
        float[][] logits = Dsv4Fixture.prefill(engine, slot, prompt, 225);
        double worst = 0;
        int worstPos = -1;
        for (int p = 0; p < prompt.length; p++) {
            for (int v = 0; v < vocab; v++) {
                double d = Math.abs(logits[p][v] - ref[p * vocab + v]);
                if (d > worst) { worst = d; worstPos = p; }
            }
        }
        System.out.printf(engine.id() + " dsv4-tiny: max |logit - numpy_f64| = %.3g at position %d (tolerance %.3g)%n", worst, worstPos, tol);
        assertThat(worst).as("max |logit - ref| (at position %d)", worstPos).isLessThanOrEqualTo(tol);

        int[] got = new int[greedy.length];
        int next = Dsv4Fixture.argmax(logits[prompt.length - 1]);
        Batch b = new Batch(1, engine.boundarySchema().rowWidth());
        for (int i = 0; i < greedy.length; i++) {
            got[i] = next;
            b.clear();
            b.addToken(slot, slot.length(), next, true);
            next = Dsv4Fixture.argmax(engine.forward(b).copyOutput(0));
        }
        assertThat(got).containsExactly(greedy);
    }
}
