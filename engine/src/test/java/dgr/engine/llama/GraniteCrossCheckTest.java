package dgr.engine.llama;

import static org.assertj.core.api.Assertions.assertThat;

import dgr.engine.Engine;
import dgr.engine.EngineOptions;
import dgr.engine.Engines;
import dgr.gguf.synth.QuantMix;
import dgr.gguf.synth.Synth;
import dgr.gguf.synth.SynthPreset;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Granite (3.x dense), the llama graph with four multipliers (embeddings, residual branches,
 * attention scores, logits), against llama.cpp. The model is
 * {@code dgr synth --preset granite-tiny --quant F32 --seed 42}; llama.cpp's greedy path and margins
 * were recorded with {@code tools/llamacpp/compare.mjs} (llama.cpp v0.4.0 through node-llama-cpp
 * 3.21.1, 2 threads):
 * <pre>
 * node compare.mjs -m granite-tiny-F32.gguf --tokens 39,695,78,995,11,352,17,18,284,74,641 -n 16 --dgr ../../dgr
 * </pre>
 * Teacher-forced on that path dgr's logits (relative to the top one, which the logit multiplier
 * doubles) agreed with llama.cpp's to 1.7e-3; leaving out any one of the four multipliers moves
 * the margins by more than the 5e-3 they are checked to (each tried).
 */
class GraniteCrossCheckTest {
    private static final LlamaCppPath LLAMA_CPP = new LlamaCppPath(LlamaCppPath.PROMPT,
        new int[] {977, 977, 977, 977, 977, 977, 977, 977, 977, 192, 192, 192, 192, 192, 192, 192},
        new double[] {0.09591749983154063, 0.6112658659327428, 0.7034508551365883, 0.6838993225244785,
            0.626407601617399, 0.537031611706734, 0.4208968273230944, 0.27621945407081494, 0.11099840480588163,
            0.039993343369287615, 0.6521187509382136, 0.5903864052300438, 0.5418578468357893, 0.4068370752411008,
            0.31878315717463845, 0.2914435728868856});
    private static final double TOLERANCE = 5e-3;

    @TempDir
    static Path dir;

    @ParameterizedTest
    @EnumSource(EngineOptions.Kind.class)
    void greedyPathAndMarginsMatchLlamaCpp(EngineOptions.Kind kind) {
        Path model = dir.resolve("granite-tiny-F32.gguf");
        if (!Files.exists(model)) Synth.write(SynthPreset.GRANITE_TINY, QuantMix.parse("F32"), 42, model);
        EngineOptions opts = EngineOptions.defaults().withKind(kind).withThreads(2).withMaxRows(32);
        try (Engine e = Engines.load(model, opts)) {
            assertThat(e.info().architecture()).isEqualTo("granite");
            LLAMA_CPP.assertMatches(e, TOLERANCE);
        }
    }
}
