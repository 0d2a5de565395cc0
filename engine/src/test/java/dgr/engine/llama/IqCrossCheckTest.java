package dgr.engine.llama;

import static org.assertj.core.api.Assertions.assertThat;

import dgr.engine.Engine;
import dgr.engine.EngineOptions;
import dgr.engine.Engines;
import dgr.gguf.GgmlType;
import dgr.gguf.synth.QuantMix;
import dgr.gguf.synth.Synth;
import dgr.gguf.synth.SynthPreset;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * llama-tiny written by {@code dgr synth} in each IQ1/IQ2/IQ3 type runs as llama.cpp runs it. The
 * paths are llama.cpp's greedy continuation and margins on those files (llama.cpp v0.4.0 through
 * node-llama-cpp 3.21.1, which read dgr's blocks without complaint):
 * <pre>
 * dgr synth --preset llama-tiny --quant IQ2_XXS -o tiny-IQ2_XXS.gguf   # seed 42
 * node compare.mjs -m tiny-IQ2_XXS.gguf --tokens 39,695,78,995,11,352,17,18,284,74,641 -n 16 --dgr ../../dgr
 * </pre>
 * llama.cpp multiplies these types against activations rounded to 8 bits (Q8_K), dgr against
 * float32, so logits relative to the top one differed by up to 0.015–0.023 (compare.mjs, teacher
 * forced): the tolerance is 0.03, against margins up to 0.4. The decoders themselves equal ggml's
 * bit for bit ({@code IqCodecTest}).
 */
class IqCrossCheckTest {
    private static final Map<GgmlType, LlamaCppPath> LLAMA_CPP = Map.ofEntries(
            Map.entry(GgmlType.IQ1_S, new LlamaCppPath(LlamaCppPath.PROMPT,
                new int[] {651, 651, 319, 651, 319, 359, 651, 319, 359, 151, 691, 642, 691, 642, 691, 582},
                new double[] {
            0.2490684986383611, 0.08962955931453642, 0.012921627712238148, 0.14348436667982423,
            0.14352443375113122, 0.03806347709892499, 0.07974978976406177, 0.23609743968024688,
            0.05699668324552931, 0.0286572662474871, 0.055724305681940756, 0.06138193890644761,
            0.05485570391137706, 0.027765098168375246, 0.03204948935374485, 0.007741834929043456})),
            Map.entry(GgmlType.IQ1_M, new LlamaCppPath(LlamaCppPath.PROMPT,
                new int[] {108, 108, 108, 108, 108, 108, 108, 108, 108, 108, 108, 108, 461, 461, 461, 461},
                new double[] {
            0.12701774126414378, 0.14497928390588033, 0.15782155741813764, 0.20680024984901824,
            0.2560245114931128, 0.22905810427607864, 0.20273701365207852, 0.15740566963356883,
            0.11722727839247771, 0.0797429104000349, 0.051303607667982476, 0.04019811427455888,
            0.0064907625747743225, 0.05061219112002391, 0.06766114909183063, 0.09434641662788934})),
            Map.entry(GgmlType.IQ2_XXS, new LlamaCppPath(LlamaCppPath.PROMPT,
                new int[] {102, 17, 17, 17, 17, 17, 17, 17, 17, 17, 17, 17, 17, 17, 17, 17},
                new double[] {
            0.08384712097636893, 0.06582406402565777, 0.008387825448339825, 0.045950373666229005,
            0.0893832547241935, 0.1338240805972104, 0.12829184647234193, 0.12064999899335671,
            0.09775369612827589, 0.08777980878986913, 0.07204200046789833, 0.08642456191219683,
            0.05651809640056005, 0.034844549436373384, 0.01665948205199186, 0.0025039045018377948})),
            Map.entry(GgmlType.IQ2_XS, new LlamaCppPath(LlamaCppPath.PROMPT,
                new int[] {102, 102, 102, 102, 452, 506, 506, 506, 506, 506, 342, 121, 862, 862, 862, 862},
                new double[] {
            0.13434724019604172, 0.08295122181858527, 0.10889532500009569, 0.06694773180901858,
            0.004484896781606018, 0.15562465024121863, 0.04596231594711675, 0.0645612689973909,
            0.05565786388856875, 0.005071978564819446, 0.03375746200834673, 0.005535380299789949,
            0.02115677570062413, 0.11991181943142593, 0.08377499841340175, 0.03177352807919842})),
            Map.entry(GgmlType.IQ2_S, new LlamaCppPath(LlamaCppPath.PROMPT,
                new int[] {152, 327, 776, 776, 776, 776, 286, 338, 338, 338, 338, 338, 338, 338, 338, 338},
                new double[] {
            0.038648439496466125, 0.014144192495437302, 0.04868196696894245, 0.117206012503841,
            0.10940697248010078, 0.07619735543271844, 0.027737509310937547, 0.059217010634531775,
            0.053019656792884895, 0.07345756313051499, 0.04886911764581914, 0.04795183608182896,
            0.04921935224618146, 0.05538579503752672, 0.08244934936249493, 0.0382819533331995})),
            Map.entry(GgmlType.IQ3_XXS, new LlamaCppPath(LlamaCppPath.PROMPT,
                new int[] {557, 557, 557, 557, 557, 974, 617, 627, 617, 108, 900, 900, 900, 900, 900, 900},
                new double[] {
            0.086266678823824, 0.220783151237244, 0.17352269596583447, 0.11492566724012487,
            0.055164288308769294, 0.003800751233209887, 0.4292738874511972, 0.010510652928448216,
            0.02427102502470202, 0.0028117407462566746, 0.039593369534296485, 0.08751873242460473,
            0.18416315434005348, 0.2794710337504078, 0.34229530800739383, 0.4015964324294634})),
            Map.entry(GgmlType.IQ3_S, new LlamaCppPath(LlamaCppPath.PROMPT,
                new int[] {152, 152, 152, 152, 152, 152, 152, 152, 152, 152, 152, 60, 152, 60, 152, 60},
                new double[] {
            0.3048904094510698, 0.38440089318498405, 0.3772086797089633, 0.3190339152889523,
            0.2298906459824117, 0.188815384376535, 0.13638958227033715, 0.10467041829298296,
            0.06023436341365862, 0.022480348094176428, 0.01143743890193516, 0.03945614963395716,
            0.04145387676121981, 0.0630249137314598, 0.03139422717182061, 0.09010415543397787})));

    @TempDir
    static Path dir;

    static Stream<Arguments> cases() {
        return Stream.of(TinyModels.KINDS).flatMap(k -> LLAMA_CPP.keySet().stream().sorted().map(t -> Arguments.of(t, k)));
    }

    /** The SIMD engine reads these types from byte spans (their integer form), the scalar one decodes rows. */
    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("cases")
    void llamaTinyFollowsLlamaCppsPath(GgmlType type, EngineOptions.Kind kind) {
        Path model = dir.resolve("llama-tiny-" + type + ".gguf");
        if (!Files.exists(model)) Synth.write(SynthPreset.LLAMA_TINY, QuantMix.parse(type.name()), 42, model);
        try (Engine e = Engines.load(model, EngineOptions.defaults().withKind(kind).withThreads(2).withMaxRows(32))) {
            assertThat(e.info().architecture()).isEqualTo("llama");
            LLAMA_CPP.get(type).assertMatches(e, 0.03);
        }
    }
}
