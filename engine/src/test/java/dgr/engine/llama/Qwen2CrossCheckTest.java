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
 * Qwen2, the llama graph with Q/K/V biases and NeoX rotary pairs, against llama.cpp. The model is
 * {@code dgr synth --preset qwen2-tiny --quant F32 --seed 42}; the expected values are
 * llama.cpp's greedy continuation of a fixed prompt and its top-1 − top-2 logit margin at each
 * step, recorded with {@code tools/llamacpp/compare.mjs} (llama.cpp v0.4.0 through
 * node-llama-cpp 3.21.1, 2 threads):
 * <pre>
 * node compare.mjs -m qwen2-tiny-F32.gguf --tokens 39,695,78,995,11,352,17,18,284,74,641 -n 16 --dgr ../../dgr
 * </pre>
 * Teacher-forced on that path dgr's logits (relative to the top one) agreed with llama.cpp's to
 * 5.3e-4; with normal instead of NeoX rotary pairs they differed by 0.031, so the margins below
 * (checked to 2e-3) tell the two apart.
 */
class Qwen2CrossCheckTest {
    private static final LlamaCppPath LLAMA_CPP = new LlamaCppPath(LlamaCppPath.PROMPT,
        new int[] {318, 318, 318, 318, 318, 318, 318, 318, 318, 318, 318, 318, 318, 318, 318, 794},
        new double[] {0.14782550925522386, 0.8971009792669289, 0.8613366995405798,
            0.7644103409820282, 0.6542896419050432, 0.554410979945942, 0.4655065429690124, 0.388931422353898,
            0.32462926585715657, 0.2684573950795226, 0.21499434076112323, 0.1598315544246649, 0.10553762288626256,
            0.05516681437362614, 0.011765669470987561, 0.0241013413085458});
    private static final double TOLERANCE = 2e-3;

    @TempDir
    static Path dir;

    @ParameterizedTest
    @EnumSource(EngineOptions.Kind.class)
    void greedyPathAndMarginsMatchLlamaCpp(EngineOptions.Kind kind) {
        Path model = dir.resolve("qwen2-tiny-F32.gguf");
        if (!Files.exists(model)) Synth.write(SynthPreset.QWEN2_TINY, QuantMix.parse("F32"), 42, model);
        EngineOptions opts = EngineOptions.defaults().withKind(kind).withThreads(2).withMaxRows(32);
        try (Engine e = Engines.load(model, opts)) {
            assertThat(e.info().architecture()).isEqualTo("qwen2");
            LLAMA_CPP.assertMatches(e, TOLERANCE);
        }
    }
}
