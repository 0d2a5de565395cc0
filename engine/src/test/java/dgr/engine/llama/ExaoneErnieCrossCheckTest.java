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
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * EXAONE 3.x and ERNIE 4.5 (dense), the llama graph under their own names, against llama.cpp; what
 * tells them apart from llama is only the rotary pairing llama.cpp gives each (NeoX for EXAONE,
 * normal for ERNIE 4.5). Models: {@code dgr synth --preset exaone-tiny|ernie4_5-tiny --quant F32
 * --seed 42}; llama.cpp's greedy paths and margins recorded with {@code tools/llamacpp/compare.mjs}
 * (llama.cpp v0.4.0 through node-llama-cpp 3.21.1, 2 threads), same prompt as the other
 * cross-checks. Agreement 7.0e-4 and 7.1e-4; EXAONE with normal pairs differed by 0.035 (tried).
 */
class ExaoneErnieCrossCheckTest {
    private static final LlamaCppPath EXAONE = new LlamaCppPath(LlamaCppPath.PROMPT,
        new int[] {641, 641, 641, 641, 641, 641, 641, 641, 641, 641, 641, 641, 641, 641, 641, 641},
        new double[] {0.0010088959706067158, 0.055224500761986484, 0.04749350379329531, 0.03190189723974335,
            0.033524658482734004, 0.04280124224320225, 0.054622463606939675, 0.06628564273821791, 0.07606757596617886,
            0.08382622966760422, 0.08919777141180685, 0.09404892956498756, 0.09805293033111973, 0.10077065779970606,
            0.10253015575267899, 0.10426750774200855});
    private static final LlamaCppPath ERNIE = new LlamaCppPath(LlamaCppPath.PROMPT,
        new int[] {950, 950, 950, 950, 950, 950, 950, 950, 950, 950, 950, 950, 950, 950, 950, 950},
        new double[] {0.002456220225306005, 1.2047742155159744, 1.2195298698799295, 1.204330998627884,
            1.1874618427152086, 1.1678785707999388, 1.1461046479839334, 1.123118407362317, 1.101038547110882,
            1.0730495974590584, 0.9998318795530494, 0.9343748281895685, 0.8758246156255511, 0.8242144514477454,
            0.7766228550371563, 0.7324988840739124});
    private static final double TOLERANCE = 2e-3;

    @TempDir
    static Path dir;

    static Stream<Arguments> cases() {
        return Stream.of(EngineOptions.Kind.values()).flatMap(k -> Stream.of(
                Arguments.of(SynthPreset.EXAONE_TINY, EXAONE, k), Arguments.of(SynthPreset.ERNIE_TINY, ERNIE, k)));
    }

    @ParameterizedTest(name = "{0} {2}")
    @MethodSource("cases")
    void greedyPathAndMarginsMatchLlamaCpp(SynthPreset preset, LlamaCppPath llamaCpp, EngineOptions.Kind kind) {
        Path model = dir.resolve(preset.name() + "-F32.gguf");
        if (!Files.exists(model)) Synth.write(preset, QuantMix.parse("F32"), 42, model);
        EngineOptions opts = EngineOptions.defaults().withKind(kind).withThreads(2).withMaxRows(32);
        try (Engine e = Engines.load(model, opts)) {
            assertThat(e.info().architecture()).isEqualTo(preset.architecture());
            llamaCpp.assertMatches(e, TOLERANCE);
        }
    }
}
