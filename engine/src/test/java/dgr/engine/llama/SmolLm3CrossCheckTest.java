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
 * SmolLM3, the llama graph without rotation on every fourth layer, against llama.cpp. The model is
 * {@code dgr synth --preset smollm3-tiny --quant F32 --seed 42} (four layers, the last unrotated);
 * llama.cpp's greedy path and margins were recorded with {@code tools/llamacpp/compare.mjs}
 * (llama.cpp v0.4.0 through node-llama-cpp 3.21.1, 2 threads):
 * <pre>
 * node compare.mjs -m smollm3-tiny-F32.gguf --tokens 39,695,78,995,11,352,17,18,284,74,641 -n 16 --dgr ../../dgr
 * </pre>
 * Teacher-forced on that path dgr's logits (relative to the top one) agreed with llama.cpp's to
 * 7.7e-4; rotating the fourth layer too moves the margins by more than the 2e-3 they are checked
 * to (tried).
 */
class SmolLm3CrossCheckTest {
    private static final LlamaCppPath LLAMA_CPP = new LlamaCppPath(LlamaCppPath.PROMPT,
        new int[] {1008, 1008, 1008, 1008, 1008, 1008, 1008, 1008, 1008, 1008, 1008, 1008, 1008, 1008, 1008, 1008},
        new double[] {0.009833662405566379, 0.5839024655599525, 0.5804625768426659, 0.581053662327677,
            0.5525173909916914, 0.5020322555306596, 0.46712078108535504, 0.43364288340249146, 0.4107782849379493,
            0.3940373923202012, 0.3784740901231114, 0.36184593761628836, 0.3465823630400262, 0.33586284726345106,
            0.330019123468257, 0.3275675943985519});
    private static final double TOLERANCE = 2e-3;

    @TempDir
    static Path dir;

    @ParameterizedTest
    @EnumSource(EngineOptions.Kind.class)
    void greedyPathAndMarginsMatchLlamaCpp(EngineOptions.Kind kind) {
        Path model = dir.resolve("smollm3-tiny-F32.gguf");
        if (!Files.exists(model)) Synth.write(SynthPreset.SMOLLM3_TINY, QuantMix.parse("F32"), 42, model);
        EngineOptions opts = EngineOptions.defaults().withKind(kind).withThreads(2).withMaxRows(32);
        try (Engine e = Engines.load(model, opts)) {
            assertThat(e.info().architecture()).isEqualTo("smollm3");
            LLAMA_CPP.assertMatches(e, TOLERANCE);
        }
    }
}
