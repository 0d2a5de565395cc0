package dgr.engine.deepseek4;

import static org.assertj.core.api.Assertions.assertThat;

import dgr.engine.Engine;
import dgr.engine.EngineOptions;
import dgr.engine.Engines;
import dgr.engine.kernel.WeightLayout;
import dgr.engine.kernel.WeightMatrix;
import dgr.gguf.synth.QuantMix;
import dgr.gguf.synth.Synth;
import dgr.gguf.synth.SynthPreset;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * DeepSeek-V4 chooses its engine as the llama family does (java-q8 where its native kernel runs,
 * else java-simd), each kind names the kernels that run, and on java-q8 every quantised matrix
 * family (attention projections, compressor and indexer, routed and shared experts, output) is
 * repacked for the 8-bit kernels, while {@code --engine simd} keeps the float32 path.
 */
class Dsv4EngineKindTest {
    @TempDir Path dir;

    @Test
    void autoChoosesAsTheLlamaFamilyAndEachKindNamesItsKernels() {
        var model = Dsv4Fixture.resource(Dsv4Fixture.MODEL);
        String preferred = (EngineOptions.Kind.preferred() == EngineOptions.Kind.Q8 ? "java-q8/" : "java-simd/") + dgr.engine.EngineId.VERSION;
        try (Engine e = Engines.load(model, Dsv4Fixture.options(8).withKind(EngineOptions.Kind.AUTO))) {
            assertThat(e.id().toString()).isEqualTo(preferred);
        }
        for (var k : List.of(EngineOptions.Kind.Q8, EngineOptions.Kind.SIMD, EngineOptions.Kind.SCALAR)) {
            try (Engine e = Engines.load(model, Dsv4Fixture.options(8).withKind(k))) {
                assertThat(e.id().toString()).isEqualTo("java-" + k.name().toLowerCase(java.util.Locale.ROOT) + "/" + dgr.engine.EngineId.VERSION);
            }
        }
    }

    @Test
    void javaQ8RepacksEveryQuantisedMatrixFamilyAndSimdKeepsFloat32Activations() {
        Path f = dir.resolve("dsv4-tiny-Q8_0.gguf");
        Synth.write(SynthPreset.byName("dsv4-tiny"), QuantMix.parse("Q8_0"), 42, f);
        try (Dsv4Engine q8 = Dsv4Engine.load(f, Dsv4Fixture.options(8).withKind(EngineOptions.Kind.Q8));
             Dsv4Engine simd = Dsv4Engine.load(f, Dsv4Fixture.options(8).withKind(EngineOptions.Kind.SIMD))) {
            // dsv4-tiny: 256-wide inputs take the 8-bit layout (128-wide ones, q_b and the experts' down, cannot).
            for (WeightMatrix m : eightBitCandidates(q8.weights())) {
                assertThat(m.layout()).as(m.name()).isEqualTo(WeightLayout.Q8_0_Q8);
            }
            for (WeightMatrix m : eightBitCandidates(simd.weights())) {
                assertThat(m.layout()).as(m.name()).isNotEqualTo(WeightLayout.Q8_0_Q8);
            }
        }
    }

    private static List<WeightMatrix> eightBitCandidates(Dsv4Weights w) {
        List<WeightMatrix> out = new ArrayList<>(List.of(w.output));
        for (Dsv4Weights.Layer l : w.layers) {
            out.addAll(List.of(l.qa(), l.kv(), l.outA()[0], l.gateExp()[0], l.upExp()[l.upExp().length - 1], l.gateSh(), l.upSh()));
            if (l.compressor() != null) out.addAll(List.of(l.compressor().kv(), l.compressor().gate()));
            if (l.indexer() != null) out.addAll(List.of(l.indexer().proj(), l.indexer().keys().kv(), l.indexer().keys().gate()));
        }
        return out;
    }
}
