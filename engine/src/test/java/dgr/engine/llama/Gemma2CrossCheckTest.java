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
 * Gemma 2 against llama.cpp: embeddings × sqrt(n_embd), NeoX pairs, a norm on each branch's output,
 * GELU, sliding-window and global layers alternating, soft caps on attention scores and logits.
 * The model is {@code dgr synth --preset gemma2-tiny --quant F32 --seed 42} (four layers, window 8,
 * caps 0.3 and 2); llama.cpp's greedy path and margins were recorded with
 * {@code tools/llamacpp/compare.mjs} (llama.cpp v0.4.0 through node-llama-cpp 3.21.1, 2 threads):
 * <pre>
 * node compare.mjs -m gemma2-tiny-F32.gguf --tokens 39,695,78,995,11,352,17,18,284,74,641 -n 16 --dgr ../../dgr
 * </pre>
 * dgr chose the same 16 tokens; teacher-forced its logits (relative to the top one) agreed with
 * llama.cpp's to 6.2e-4. Without either soft cap, without the window or with the window on the
 * odd layers instead of the even ones the margins move by more than the 2e-3 they are checked to
 * (each tried).
 */
class Gemma2CrossCheckTest {
    private static final LlamaCppPath LLAMA_CPP = new LlamaCppPath(LlamaCppPath.PROMPT,
        new int[] {1019, 1019, 1019, 1019, 397, 397, 397, 397, 397, 397, 164, 164, 164, 164, 164, 164},
        new double[] {0.0031642932248123756, 0.2552607138892844, 0.2051454840190683, 0.00472031935201489,
            0.0031157483877750636, 0.16711383266252167, 0.14727042618810504, 0.05132356462077503,
            0.09256614523701057, 0.004532622502913419, 0.0011198268652421461, 0.4043185050558664,
            0.18607746872871633, 0.09364555760616611, 0.05456517416122608, 0.08109152597308622});
    private static final double TOLERANCE = 2e-3;

    @TempDir
    static Path dir;

    @ParameterizedTest
    @EnumSource(EngineOptions.Kind.class)
    void greedyPathAndMarginsMatchLlamaCpp(EngineOptions.Kind kind) {
        Path model = dir.resolve("gemma2-tiny-F32.gguf");
        if (!Files.exists(model)) Synth.write(SynthPreset.GEMMA2_TINY, QuantMix.parse("F32"), 42, model);
        EngineOptions opts = EngineOptions.defaults().withKind(kind).withThreads(2).withMaxRows(32);
        try (Engine e = Engines.load(model, opts)) {
            assertThat(e.info().architecture()).isEqualTo("gemma2");
            LLAMA_CPP.assertMatches(e, TOLERANCE);
        }
    }
}
