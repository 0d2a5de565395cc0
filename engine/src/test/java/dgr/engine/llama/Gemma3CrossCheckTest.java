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
 * Gemma 3 (text), against llama.cpp: embeddings × sqrt(n_embd), per-head Q/K norms, NeoX pairs at
 * base 10⁶ on global layers and 10⁴ on the five-in-six sliding-window layers, a norm on each
 * branch's output before the residual add, GELU. The model is
 * {@code dgr synth --preset gemma3-tiny --quant F32 --seed 42} (six layers, window 8, so the
 * 26-position path crosses the window); llama.cpp's greedy path and margins were recorded with
 * {@code tools/llamacpp/compare.mjs} (llama.cpp v0.4.0 through node-llama-cpp 3.21.1, 2 threads):
 * <pre>
 * node compare.mjs -m gemma3-tiny-F32.gguf --tokens 39,695,78,995,11,352,17,18,284,74,641 -n 16 --dgr ../../dgr
 * </pre>
 * dgr chose the same 16 tokens; teacher-forced its logits (relative to the top one) agreed with
 * llama.cpp's to 1.7e-3 (llama.cpp reads GELU from an f16 table and keeps K/V in f16). Without the
 * window, with the global rotation on local layers, with SiLU for GELU, without the branch-output
 * norms or without the embedding scale the margins move by more than the 5e-3 they are checked to
 * (each tried).
 */
class Gemma3CrossCheckTest {
    private static final LlamaCppPath LLAMA_CPP = new LlamaCppPath(LlamaCppPath.PROMPT,
        new int[] {876, 81, 118, 118, 405, 174, 637, 637, 524, 524, 730, 730, 730, 730, 730, 128},
        new double[] {0.005659532302413339, 0.12349346524762161, 0.05741019979098638, 0.20180283853872272,
            0.07773686201859409, 0.028508236445057733, 0.05426118695916671, 0.05104641526921583,
            0.03348754507229845, 0.23517317303879715, 0.033686394515953566, 0.38900905953904097,
            0.2746933333064572, 0.3445941785904676, 0.1507198597616366, 0.09416795847803705});
    private static final double TOLERANCE = 5e-3;

    @TempDir
    static Path dir;

    @ParameterizedTest
    @EnumSource(EngineOptions.Kind.class)
    void greedyPathAndMarginsMatchLlamaCpp(EngineOptions.Kind kind) {
        Path model = dir.resolve("gemma3-tiny-F32.gguf");
        if (!Files.exists(model)) Synth.write(SynthPreset.GEMMA3_TINY, QuantMix.parse("F32"), 42, model);
        EngineOptions opts = EngineOptions.defaults().withKind(kind).withThreads(2).withMaxRows(32);
        try (Engine e = Engines.load(model, opts)) {
            assertThat(e.info().architecture()).isEqualTo("gemma3");
            LLAMA_CPP.assertMatches(e, TOLERANCE);
        }
    }
}
