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
 * Phi-3 against llama.cpp: Q, K and V in one {@code attn_qkv} tensor, the FFN's gate and up in one
 * {@code ffn_up} (gate first), NeoX pairs, LongRoPE's short frequency factors (the context here is
 * within the original one) and magnitude factor. The model is
 * {@code dgr synth --preset phi3-tiny --quant F32 --seed 42}; llama.cpp's greedy path and margins
 * were recorded with {@code tools/llamacpp/compare.mjs} (llama.cpp v0.4.0 through node-llama-cpp
 * 3.21.1, 2 threads):
 * <pre>
 * node compare.mjs -m phi3-tiny-F32.gguf --tokens 39,695,78,995,11,352,17,18,284,74,641 -n 16 --dgr ../../dgr
 * </pre>
 * dgr chose the same 16 tokens; teacher-forced its logits (relative to the top one) agreed with
 * llama.cpp's to 8.0e-4. Without the frequency factors, without the magnitude factor, with gate
 * and up swapped or with normal rotary pairs the margins move by more than the 2e-3 they are
 * checked to (each tried).
 */
class Phi3CrossCheckTest {
    private static final LlamaCppPath LLAMA_CPP = new LlamaCppPath(LlamaCppPath.PROMPT,
        new int[] {8480, 18720, 18720, 18720, 4889, 26821, 8480, 18720, 18720, 18720, 20617, 18720, 20617, 17491, 20617, 17491},
        new double[] {0.008481026485361198, 0.04163148112621329, 0.08599884795976465, 0.00505444830464441,
            0.030005467019295295, 0.032215862186037114, 0.13635930491789594, 0.06925896453343938, 0.10546308173664443,
            0.02320916757059699, 0.025836710236934124, 0.113848054657824, 0.09093941759532775, 0.003083590337590536,
            0.1897576671752308, 0.05428590470879513});
    private static final double TOLERANCE = 2e-3;

    @TempDir
    static Path dir;

    @ParameterizedTest
    @EnumSource(EngineOptions.Kind.class)
    void greedyPathAndMarginsMatchLlamaCpp(EngineOptions.Kind kind) {
        Path model = dir.resolve("phi3-tiny-F32.gguf");
        if (!Files.exists(model)) Synth.write(SynthPreset.PHI3_TINY, QuantMix.parse("F32"), 42, model);
        EngineOptions opts = EngineOptions.defaults().withKind(kind).withThreads(2).withMaxRows(32);
        try (Engine e = Engines.load(model, opts)) {
            assertThat(e.info().architecture()).isEqualTo("phi3");
            LLAMA_CPP.assertMatches(e, TOLERANCE);
        }
    }

    /** Past the original context (4096 here) the long factors rotate instead, as llama.cpp chooses. */
    @org.junit.jupiter.api.Test
    void aContextPastTheOriginalOneRotatesWithTheLongFactors() {
        Path model = dir.resolve("phi3-tiny-F32.gguf");
        if (!Files.exists(model)) Synth.write(SynthPreset.PHI3_TINY, QuantMix.parse("F32"), 42, model);
        EngineOptions opts = EngineOptions.defaults().withThreads(1).withMaxRows(4);
        try (Engine shortCtx = Engines.load(model, opts.withContextLength(4096));
             Engine longCtx = Engines.load(model, opts.withContextLength(4097))) {
            RopeConfig rope = ((LlamaEngine) shortCtx).config().rope();
            assertThat(rope.forContext(4096).freqFactors()).isSameAs(rope.freqFactors());
            assertThat(rope.forContext(4097).freqFactors()).isSameAs(rope.longFreqFactors());
            assertThat(rope.longFreqFactors()[31]).isEqualTo(4f); // the long ramp's end, not the short one's 2
            assertThat(longCtx.recipe().id()).isNotEqualTo(shortCtx.recipe().id());
        }
    }
}
