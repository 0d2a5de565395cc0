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
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every llama variant ({@link LlamaVariant}) but plain llama, and plain llama at a width the span
 * layouts do not take, against llama.cpp. Each model is
 * {@code dgr synth --preset NAME-tiny --quant F32 --seed 42}; the expected values are llama.cpp's
 * greedy continuation of a fixed prompt and its top-1 − top-2 logit margin at each step, recorded
 * with {@code tools/llamacpp/compare.mjs} (llama.cpp v0.4.0 through node-llama-cpp 3.21.1, 2 threads):
 * <pre>
 * node compare.mjs -m NAME-tiny-F32.gguf --tokens 39,695,78,995,11,352,17,18,284,74,641 -n 16 --dgr ../../dgr
 * </pre>
 * dgr replays each path teacher-forced on both engines; the margins must agree within the case's
 * tolerance and the tokens wherever llama.cpp's margin exceeds it ({@link LlamaCppPath#assertMatches}).
 * "Agreement" below is the largest difference of logits relative to the top one, teacher-forced, as
 * compare.mjs reported it; "fails" records a mutation of the engine (the variant's distinguishing
 * piece removed) that this check caught.
 */
class LlamaCppCrossCheckTest {
    /** A synthesized model, the margin tolerance its check uses, and llama.cpp's recorded path. */
    record Case(SynthPreset preset, double tolerance, LlamaCppPath llamaCpp) {
        @Override
        public String toString() {
            return preset.name();
        }
    }

    /** Qwen2: Q/K/V biases, NeoX pairs. Agreement 5.3e-4; with normal pairs the logits differed by 0.031. */
    private static final Case QWEN2 = new Case(SynthPreset.QWEN2_TINY, 2e-3, new LlamaCppPath(LlamaCppPath.PROMPT,
        new int[] {
            318, 318, 318, 318, 318, 318, 318, 318, 318, 318, 318, 318, 318, 318, 318, 794},
        new double[] {
            0.14782550925522386, 0.8971009792669289, 0.8613366995405798, 0.7644103409820282,
            0.6542896419050432, 0.554410979945942, 0.4655065429690124, 0.388931422353898,
            0.32462926585715657, 0.2684573950795226, 0.21499434076112323, 0.1598315544246649,
            0.10553762288626256, 0.05516681437362614, 0.011765669470987561, 0.0241013413085458}));

    /** Qwen3: per-head Q/K norms before NeoX pairs, no biases, heads of 128 against n_embd/n_head = 64.
     * Agreement 7.4e-4; without the Q/K norms or with normal pairs it fails (both tried). */
    private static final Case QWEN3 = new Case(SynthPreset.QWEN3_TINY, 2e-3, new LlamaCppPath(LlamaCppPath.PROMPT,
        new int[] {
            882, 882, 882, 882, 882, 882, 882, 882, 882, 882, 882, 882, 882, 882, 882, 882},
        new double[] {
            0.03438496884713338, 0.5801723394927771, 0.7370711176238167, 0.8427407732074705,
            0.850499587414153, 0.7462840229835717, 0.7093279433447064, 0.6628654068134638,
            0.6298628947547078, 0.6181818867084985, 0.6033976826176408, 0.5568620435204128,
            0.47119600950510687, 0.3853512197954574, 0.3319726028009118, 0.3052558915353858}));

    /** Granite 3.x: the four multipliers. Agreement 1.7e-3 (relative to the top logit, which the
     * logit multiplier doubles); leaving out any one multiplier fails (each tried). */
    private static final Case GRANITE = new Case(SynthPreset.GRANITE_TINY, 5e-3, new LlamaCppPath(LlamaCppPath.PROMPT,
        new int[] {
            977, 977, 977, 977, 977, 977, 977, 977, 977, 192, 192, 192, 192, 192, 192, 192},
        new double[] {
            0.09591749983154063, 0.6112658659327428, 0.7034508551365883, 0.6838993225244785,
            0.626407601617399, 0.537031611706734, 0.4208968273230944, 0.27621945407081494,
            0.11099840480588163, 0.039993343369287615, 0.6521187509382136, 0.5903864052300438,
            0.5418578468357893, 0.4068370752411008, 0.31878315717463845, 0.2914435728868856}));

    /**
     * MiniCPM: Granite's multipliers (less the attention one) under {@code minicpm.} keys. Agreement
     * 1.4e-3 (the logit multiplier doubles the top logit); without the residual multiplier the first
     * token already differs (tried).
     */
    private static final Case MINICPM = new Case(SynthPreset.MINICPM_TINY, 5e-3, new LlamaCppPath(LlamaCppPath.PROMPT,
        new int[] {
            950, 950, 950, 950, 950, 950, 950, 950, 950, 950, 950, 950, 950, 950, 950, 950},
        new double[] {
            0.10445883057584737, 0.9899359245846071, 0.9921469680936026, 0.9849349989733751,
            0.9655185011787122, 0.9352781800868435, 0.8978344977801385, 0.8588553922991249,
            0.8148069599346854, 0.7697599256118757, 0.7265441931576051, 0.6861479291801507,
            0.6487131818044887, 0.6064924780767678, 0.5217609363209839, 0.4409244975568871}));

    /**
     * DeepSeek-V3's shape (deepseek2): latent attention with a query rank, a dense first layer, then
     * sigmoid-routed experts with a choice bias, renormalised and scaled, plus a shared expert.
     * Agreement 3.0e-4 on a path of five different tokens; without the choice bias or with softmax
     * routing the fourth token differs, and scores scaled by the state's width instead of
     * key_length_mla move the margins by 8e-3 (each tried).
     */
    private static final Case DEEPSEEK2 = new Case(SynthPreset.DEEPSEEK2_TINY, 2e-3, new LlamaCppPath(LlamaCppPath.PROMPT,
        new int[] {
            216, 500, 216, 500, 216, 866, 837, 528, 528, 528, 780, 780, 780, 780, 780, 780},
        new double[] {
            0.0800314759412375, 0.008039025672257338, 0.14881109263358994, 0.05028637125658353,
            0.16020345149165216, 0.06262275783504734, 0.10577813676662018, 0.15135858647365374,
            0.18280317642414357, 0.04704068890952939, 0.003625451468014518, 0.040825107335735744,
            0.07216281780606071, 0.09590592133805309, 0.07805191489024388, 0.04338170425622501}));

    /**
     * GLM-4.5-Air's shape ({@code glm4moe}): Q/K/V biases, NeoX pairs over half of each head, the
     * FFN pre-norm under {@code post_attention_norm}, a dense first layer, sigmoid routing with a
     * choice bias, renormalised ×2.5, one shared expert, and a fourth block that is a NextN layer
     * the main graph skips. Agreement 6.7e-4; with normal pairs 8.3e-2 (tried).
     */
    private static final Case GLM4MOE = new Case(SynthPreset.GLM4MOE_TINY, 2e-3, new LlamaCppPath(LlamaCppPath.PROMPT,
        new int[] {
            632, 632, 632, 632, 632, 632, 632, 632, 632, 632, 632, 632, 632, 632, 632, 632},
        new double[] {
            0.04008770488888036, 0.010041968271729651, 0.044199533240382394, 0.07215688308181356,
            0.09975273400721374, 0.10160161301746928, 0.12658884921669422, 0.10167278369548338,
            0.11942014277952939, 0.134495991031077, 0.18208794196182332, 0.1548982516921633,
            0.12949926465612815, 0.10677544711370413, 0.08667995518992377, 0.06862403095632352}));

    /**
     * glm4moe-tiny with GLM-4.5's (355B) per-head RMS norms on Q and K, read where a file has them.
     * Agreement 8.6e-4; the norms change the path itself (218… against glm4moe-tiny's 632…).
     */
    private static final Case GLM4MOE_QKNORM = new Case(SynthPreset.GLM4MOE_QKNORM_TINY, 2e-3, new LlamaCppPath(LlamaCppPath.PROMPT,
        new int[] {
            218, 113, 218, 218, 218, 218, 218, 218, 218, 218, 218, 218, 218, 218, 218, 218},
        new double[] {
            0.1495416154578173, 0.0618147641967548, 0.17888251719791004, 0.17434737722873717,
            0.2330506539803796, 0.26933614121898675, 0.2841479826308104, 0.2621506452019915,
            0.25933369908552883, 0.2640190684760837, 0.16571080362498503, 0.13602225303706916,
            0.11076200451404183, 0.09348434612939105, 0.14487660602386843, 0.06166755619126363}));

    /**
     * DeepSeek-V2-Lite's variant (27 layers, as llama.cpp tells Lite apart): a plain attn_q, softmax
     * routing without renormalising inside two of four expert groups, two shared experts, YaRN ×4
     * with mscale_all_dim 0.707. Agreement 4.7e-4; without the groups, with mscale taken as
     * 1 + 0.1·yarn_log_multiplier·ln(factor), or with the rotation's YaRN magnitude kept, it fails (each
     * tried: 6e-3 to 1.5e-2).
     */
    private static final Case DEEPSEEK2_LITE = new Case(SynthPreset.DEEPSEEK2_LITE_TINY, 2e-3, new LlamaCppPath(LlamaCppPath.PROMPT,
        new int[] {
            952, 952, 952, 952, 952, 952, 867, 952, 952, 952, 952, 40, 1000, 952, 40, 1000},
        new double[] {
            0.03521383662785915, 0.0639441763079649, 0.044540802619692066, 0.03390078839920285,
            0.023269267436791807, 0.006613852944338028, 0.008720207397762358, 0.04136474421046721,
            0.008876673002379931, 0.005452593472088374, 0.0006756894144341885, 0.000701713203104859,
            0.024301498037484492, 0.022402721826177974, 0.011631742140299828, 0.03944553332930223}));

    /**
     * deepseek2-tiny in the layout before llama.cpp's MLA one (one attn_kv_b, as many K/V heads as
     * query heads), which llama.cpp runs as plain multi-head attention and dgr splits at load into
     * the absorbed matrices. Agreement 4.8e-4; with the K rows not transposed it fails (0.22, tried).
     */
    private static final Case DEEPSEEK2_KVB = new Case(SynthPreset.DEEPSEEK2_KVB_TINY, 2e-3, new LlamaCppPath(LlamaCppPath.PROMPT,
        new int[] {
            236, 205, 859, 811, 851, 205, 205, 859, 782, 782, 782, 782, 782, 782, 782, 556},
        new double[] {
            0.01796046115787142, 0.07904084502748088, 0.044415659954789355, 0.12549287819882604,
            0.016771753424511537, 0.17213962028421115, 0.10586545493090238, 0.0032600308513881515,
            0.00906316099830029, 0.024346147079089775, 0.01931803885377814, 0.028270755719614904,
            0.04397264782580379, 0.05918407352167332, 0.004219285565256747, 0.04112808565311532}));

    /**
     * gpt-oss: biases, sink logits, the even layer's window of 8, YaRN, biased experts chosen by
     * raw score and weighed by the softmax of the chosen, OpenAI's clamped SwiGLU. Agreement 9.3e-4
     * on a path of ten different tokens; without the sinks, with plain SwiGLU, without the down
     * biases, with softmax-over-all routing or without the window it fails (each tried).
     */
    private static final Case GPT_OSS = new Case(SynthPreset.GPT_OSS_TINY, 2e-3, new LlamaCppPath(LlamaCppPath.PROMPT,
        new int[] {
            762, 930, 930, 261, 35, 353, 52, 500, 343, 731, 731, 731, 731, 731, 224, 731},
        new double[] {
            0.064487785320952, 0.3133334419533691, 0.11155460244105164, 0.07088132270655922,
            0.16862550836285894, 0.18902331766153502, 0.057129982148341085, 0.022514138148456375,
            0.011820311835726294, 0.2750690054643439, 0.2518392792598583, 0.13747457588131518,
            0.15826947953077752, 0.32507947093293055, 0.01274383498859688, 0.11022447529419122}));

    /**
     * StableLM 2 12B's form: a LayerNorm over each head of Q and K with that head's weights.
     * Agreement 8.2e-4; an RMS norm there instead fails (7e-2, tried).
     */
    private static final Case STABLELM_QK = new Case(SynthPreset.STABLELM_QK_TINY, 2e-3, new LlamaCppPath(LlamaCppPath.PROMPT,
        new int[] {
            138, 1013, 1013, 1013, 1013, 1013, 1013, 1013, 240, 240, 240, 240, 240, 728, 728, 728},
        new double[] {
            0.07570474948716832, 0.21016610447250716, 0.13068933145245865, 0.0653744511915022,
            0.1280575188372861, 0.1868966097176772, 0.13737282651902216, 0.01178460789476965,
            0.03063014222174054, 0.06852562702789822, 0.04311345778721076, 0.02620872175692135,
            0.04229768027847314, 0.0039383678185958, 0.07826690581227069, 0.046228998969799484}));

    /**
     * Command R+'s form (64 narrow layers, the depth at which llama.cpp reads the Q/K norms):
     * per-head LayerNorm of Q and K. Agreement 2.8e-4; an RMS norm there instead moves the margins
     * by 8e-3 (tried).
     */
    private static final Case COMMAND_R_QK = new Case(SynthPreset.COMMAND_R_QK_TINY, 2e-3, new LlamaCppPath(LlamaCppPath.PROMPT,
        new int[] {
            324, 324, 324, 324, 324, 324, 324, 324, 324, 324, 324, 324, 324, 324, 324, 324},
        new double[] {
            0.09025695358530683, 0.15938278370485648, 0.1502099778969388, 0.14313919798741637,
            0.14187998431110405, 0.1437409349353338, 0.14470885115420806, 0.14421905390540157,
            0.1432569890802844, 0.14289145036338802, 0.14332769760745734, 0.14237633490469292,
            0.13992946629674918, 0.1370120383793365, 0.1317872699278091, 0.12357581460297862}));

    /** XVERSE: the llama graph under its own name. The same 16 tokens, agreement 8.1e-4. */
    private static final Case XVERSE = new Case(SynthPreset.XVERSE_TINY, 2e-3, new LlamaCppPath(LlamaCppPath.PROMPT,
        new int[] {
            152, 152, 152, 152, 152, 152, 152, 152, 152, 152, 152, 748, 152, 748, 152, 748},
        new double[] {
            0.09933156801751686, 0.2961928780639873, 0.31375112619637324, 0.313994205746722,
            0.23543487846283018, 0.17339562744384196, 0.12085981874501783, 0.07604667682447808,
            0.041330138362514646, 0.01866576040922041, 0.004827930602078645, 0.003010080711349339,
            0.08517643631008287, 0.01528995844413572, 0.034632975069174066, 0.001173432553515319}));

    /** InternLM2: the llama graph under its own name, its own output head. The same 16 tokens,
     * agreement 8.1e-4; NeoX pairs fail (tried). */
    private static final Case INTERNLM2 = new Case(SynthPreset.INTERNLM2_TINY, 2e-3, new LlamaCppPath(LlamaCppPath.PROMPT,
        new int[] {
            152, 152, 152, 152, 152, 152, 152, 152, 152, 152, 152, 748, 152, 748, 152, 148},
        new double[] {
            0.09907526539202927, 0.2964556520022299, 0.3149163714497991, 0.3129368245149875,
            0.23683667053563973, 0.17481321142269035, 0.12325108919566308, 0.07939073605876956,
            0.044066701456734414, 0.020528251834973865, 0.006488275402446675, 0.0013139254904537268,
            0.07898996477479514, 0.012971233276768857, 0.02901114860899945, 0.0010257836507792106}));

    /** Gemma (1): sqrt(n_embd) embeddings, queries × 1/sqrt(head_dim), NeoX pairs, GELU, one K/V
     * head. The same 16 tokens, agreement 1.2e-4; without the embedding scale, with SiLU or with
     * normal pairs it fails (each tried). */
    private static final Case GEMMA = new Case(SynthPreset.GEMMA_TINY, 2e-3, new LlamaCppPath(LlamaCppPath.PROMPT,
        new int[] {
            860, 860, 860, 860, 860, 860, 860, 860, 860, 860, 860, 860, 860, 860, 860, 860},
        new double[] {
            0.0011354006816590712, 0.39553318215664657, 0.39937794649202996, 0.4022398823411457,
            0.40343849391974995, 0.40312642640228, 0.4020996275441808, 0.3933484149857227,
            0.38039801866899303, 0.3683653985008659, 0.35758388978713906, 0.3481268009590952,
            0.3402741147337105, 0.332915067103146, 0.3259984073699975, 0.3189508188223753}));

    /** Gemma 2: sqrt(n_embd) embeddings, NeoX pairs, branch-output norms, GELU, window 8 on
     * alternate layers, soft caps 0.3 and 2. The same 16 tokens, agreement 6.2e-4; without either
     * cap, without the window or with it on the other layers it fails (each tried). */
    private static final Case GEMMA2 = new Case(SynthPreset.GEMMA2_TINY, 2e-3, new LlamaCppPath(LlamaCppPath.PROMPT,
        new int[] {
            1019, 1019, 1019, 1019, 397, 397, 397, 397, 397, 397, 164, 164, 164, 164, 164, 164},
        new double[] {
            0.0031642932248123756, 0.2552607138892844, 0.2051454840190683, 0.00472031935201489,
            0.0031157483877750636, 0.16711383266252167, 0.14727042618810504, 0.05132356462077503,
            0.09256614523701057, 0.004532622502913419, 0.0011198268652421461, 0.4043185050558664,
            0.18607746872871633, 0.09364555760616611, 0.05456517416122608, 0.08109152597308622}));

    /** Gemma 3: as Gemma 2 without caps plus per-head Q/K norms, five window-8 layers at base 1e4
     * to one global at 1e6; the 26-position path crosses the window. The same 16 tokens, agreement
     * 1.7e-3 (llama.cpp reads GELU from an f16 table, keeps K/V in f16); without the window, with
     * the global rotation on local layers, with SiLU, without the branch norms or without the
     * embedding scale it fails (each tried). */
    private static final Case GEMMA3 = new Case(SynthPreset.GEMMA3_TINY, 5e-3, new LlamaCppPath(LlamaCppPath.PROMPT,
        new int[] {
            876, 81, 118, 118, 405, 174, 637, 637, 524, 524, 730, 730, 730, 730, 730, 128},
        new double[] {
            0.005659532302413339, 0.12349346524762161, 0.05741019979098638, 0.20180283853872272,
            0.07773686201859409, 0.028508236445057733, 0.05426118695916671, 0.05104641526921583,
            0.03348754507229845, 0.23517317303879715, 0.033686394515953566, 0.38900905953904097,
            0.2746933333064572, 0.3445941785904676, 0.1507198597616366, 0.09416795847803705}));

    /** SmolLM2-135M's attention (llama): rows of 576 values, so no 4-bit or byte spans, nine query
     * heads on three K/V heads. The same 16 tokens, agreement 1.0e-3; reading each query group's
     * K/V from the next K/V head fails (tried). */
    private static final Case SMOLLM2 = new Case(SynthPreset.SMOLLM2_TINY, 3e-3, new LlamaCppPath(LlamaCppPath.PROMPT,
        new int[] {
            389, 389, 389, 389, 389, 389, 389, 389, 676, 676, 676, 676, 676, 676, 676, 676},
        new double[] {
            0.3674508451742087, 0.9856706017935863, 0.7155274977606174, 0.49678857673394194,
            0.29058300245262636, 0.16039500528380302, 0.08139202250215316, 0.021300510993794042,
            0.032584813168610616, 1.2290449372176946, 1.1725292286793723, 1.1223674223228937,
            1.0817874731025654, 1.054435614583693, 1.0426578761373726, 1.0485422018453994}));

    /** StableLM 2: LayerNorm blocks (mean and bias), Q/K/V biases, SwiGLU, a quarter of each
     * head rotated (NeoX pairs). The same 16 tokens, agreement 6.2e-4; without the mean, without
     * the norms' biases or rotating whole heads it fails (each tried). */
    private static final Case STABLELM = new Case(SynthPreset.STABLELM_TINY, 2e-3, new LlamaCppPath(LlamaCppPath.PROMPT,
        new int[] {
            295, 616, 774, 718, 616, 774, 718, 616, 774, 460, 774, 460, 774, 460, 774, 460},
        new double[] {
            0.08003940318585023, 0.0009933344084132045, 0.05957252070893304, 0.09554650918867225,
            0.049337339475933106, 0.2099944083389067, 0.05958967893893696, 0.08355911712819708,
            0.23124860824697357, 0.0037402606248013726, 0.03977209993308328, 0.07867927324623292,
            0.0648079785009168, 0.05601120246698876, 0.03174421057310983, 0.02909471553538978}));

    /** StarCoder2: LayerNorm blocks, biases on every projection, an ungated GELU FFN, tied
     * embeddings. The same 16 tokens, agreement 4.3e-4; without the mean, the norms' biases, the
     * output-projection bias or the FFN's biases it fails (each tried). */
    private static final Case STARCODER2 = new Case(SynthPreset.STARCODER2_TINY, 2e-3, new LlamaCppPath(LlamaCppPath.PROMPT,
        new int[] {
            79, 79, 79, 79, 79, 79, 79, 79, 79, 79, 79, 79, 105, 105, 105, 105},
        new double[] {
            0.12398376785114795, 0.23895786109242945, 0.2008837746342511, 0.18835026104910568,
            0.19119925846914132, 0.16947411343360752, 0.1305994153787342, 0.10165999230330236,
            0.07739907115143119, 0.054342509206468215, 0.03173292865862454, 0.011143504694381079,
            0.007330806224565833, 0.5210617471385399, 0.5288572583668802, 0.5399063701133286}));

    /** GPT-NeoX (Pythia): StarCoder2's blocks with one attn_qkv and its bias, a quarter of each
     * head rotated, attention and FFN side by side each behind its own norm. The same 16 tokens,
     * agreement 4.7e-4; with the blocks one after the other it fails (tried). */
    private static final Case GPTNEOX = new Case(SynthPreset.GPTNEOX_TINY, 2e-3, new LlamaCppPath(LlamaCppPath.PROMPT,
        new int[] {
            709, 685, 279, 121, 834, 937, 944, 1001, 673, 665, 890, 833, 1009, 368, 713, 163},
        new double[] {
            0.018285011215019686, 0.03905786650007048, 0.0319436482179869, 0.020392783494085798,
            0.11970000789046598, 0.027325808877783686, 0.022648754974112784, 0.0716172015088068,
            0.02518981747573168, 0.08294987983846536, 0.07480323671779932, 0.14745130688624908,
            0.029671270990696108, 0.0278992311298758, 0.0769434371057427, 0.05892546438918966}));

    /** GPT-2: StarCoder2's blocks with one attn_qkv and its bias, learned positions added to the
     * embeddings, no rotation. The same 16 tokens, agreement 6.8e-4; without the position rows,
     * or with each row one position late, it fails (each tried). */
    private static final Case GPT2 = new Case(SynthPreset.GPT2_TINY, 2e-3, new LlamaCppPath(LlamaCppPath.PROMPT,
        new int[] {
            759, 759, 759, 759, 141, 141, 141, 141, 141, 141, 141, 141, 141, 141, 141, 141},
        new double[] {
            0.07826211914940462, 0.42280239598946334, 0.032716014131668025, 0.051129188276142656,
            0.14146784331407858, 0.36210301141255385, 0.5783241471888125, 0.4330947410330417,
            0.3633935449222889, 0.2521371372204566, 0.3219716652593787, 0.40170845946266454,
            0.39509817957168014, 0.22947273189952533, 0.35227320420226693, 0.19970614916651908}));

    /** Command R: LayerNorm without biases, attention and SwiGLU FFN side by side from one norm,
     * normal pairs, logits × 0.5 ({@code logit_scale}). The same 16 tokens, agreement 3.5e-4;
     * without the logit scale, with NeoX pairs or with the FFN reading the un-normed input it
     * fails (each tried). */
    private static final Case COMMAND_R = new Case(SynthPreset.COMMAND_R_TINY, 2e-3, new LlamaCppPath(LlamaCppPath.PROMPT,
        new int[] {
            641, 641, 641, 641, 641, 641, 641, 641, 641, 641, 641, 641, 675, 675, 675, 675},
        new double[] {
            0.2170029874791508, 0.20589366044923096, 0.16341484948573193, 0.1371902878669271,
            0.12107229348098247, 0.11086799893085963, 0.1043573047205184, 0.08104562119748504,
            0.056842427858036615, 0.03694391534645014, 0.019967427004816685, 0.005521472419396822,
            0.007437943530819169, 0.4702679708409194, 0.46976389693471354, 0.4685183024181505}));

    /** Phi-2: one LayerNorm per block feeding attention and the ungated FFN side by side, a
     * fused attn_qkv with its bias, half of each head rotated, an output bias. The same 16
     * tokens, agreement 5.3e-4; without the mean, the norms' biases, the projection biases or the
     * output bias, with the FFN reading the un-normed input, or rotating whole heads, it fails
     * (each tried). */
    private static final Case PHI2 = new Case(SynthPreset.PHI2_TINY, 2e-3, new LlamaCppPath(LlamaCppPath.PROMPT,
        new int[] {
            374, 339, 860, 374, 216, 592, 565, 677, 891, 797, 205, 346, 784, 606, 947, 608},
        new double[] {
            0.1520589994018895, 0.10363663238068543, 0.03707664753363993, 0.2598493750790798,
            0.01810378771742016, 0.1226092809127799, 0.0824871502925788, 0.09527301027371671,
            0.2669416844799235, 0.023214503993185254, 0.005783369410929495, 0.07772806769542573,
            0.29801989407512774, 0.1297003491661659, 0.0037944424221407758, 0.021478971146684067}));

    /** EXAONE 4.0: no pre-norms, per-head Q/K norms, branch-output norms, NeoX pairs; two global
     * layers. The same 16 tokens, agreement 9.4e-4; normal pairs fail (tried). */
    private static final Case EXAONE4 = new Case(SynthPreset.EXAONE4_TINY, 2e-3, new LlamaCppPath(LlamaCppPath.PROMPT,
        new int[] {
            616, 426, 426, 147, 907, 907, 723, 723, 328, 148, 148, 148, 148, 148, 148, 723},
        new double[] {
            0.10875975980488484, 0.11045735510126686, 0.043352280037793456, 0.017048727416429266,
            0.046903863209276864, 0.024998697701979822, 0.049069293751829335, 0.03594044655490425,
            0.16284118344448206, 0.048327965277629836, 0.23311285327287745, 0.2825686076513998,
            0.203673463852164, 0.08091920046532941, 0.004978423058425108, 0.02344611500607119}));

    /** EXAONE 4.0 at the 32B's depth (64 narrow layers): three of four layers sliding-window
     * (window 8, crossed by the 26-position path), the fourth global and unrotated. The same 16
     * tokens, agreement 7.4e-4; without the window or with the global layers rotated it fails
     * (each tried). */
    private static final Case EXAONE4_SWA = new Case(SynthPreset.EXAONE4_SWA_TINY, 2e-3, new LlamaCppPath(LlamaCppPath.PROMPT,
        new int[] {
            540, 749, 566, 419, 419, 255, 255, 400, 400, 937, 937, 866, 866, 39, 864, 864},
        new double[] {
            0.043055684267084615, 4.0399717692096715e-05, 0.018448570263217334, 0.0008594050258956543,
            0.03562994114451179, 0.06249228658184869, 0.08437745660506568, 0.0430149591412512,
            0.06142532933826317, 0.01768409726792175, 0.017746344551222037, 0.046148530757675665,
            0.020914479106806105, 0.013520624962501948, 0.04612614913726709, 0.055597141023223884}));

    /** GLM-4: norms before and after each branch, one attn_qkv with its bias, gate and up in one
     * ffn_up, half of each head rotated in normal pairs. The same 16 tokens, agreement 8.7e-4; NeoX
     * pairs, or gate and up swapped, fail (each tried). */
    private static final Case GLM4 = new Case(SynthPreset.GLM4_TINY, 2e-3, new LlamaCppPath(LlamaCppPath.PROMPT,
        new int[] {
            267, 267, 915, 622, 559, 559, 559, 559, 179, 559, 984, 984, 984, 984, 984, 984},
        new double[] {
            0.009213938281953382, 0.026602116976567558, 0.003133947643162216, 0.04036451691285503,
            0.08667834756500792, 0.15721012458613703, 0.19529743242563757, 0.087891693320711,
            0.012150727843661002, 0.048275996365682694, 0.016585818086458204, 0.13163993019802955,
            0.2703960703994346, 0.38284162837286484, 0.41808923636978435, 0.38467257343822947}));

    /** Arcee: llama with an ungated FFN, squared ReLU. The same 16 tokens, agreement 8.8e-4; GELU,
     * or ReLU unsquared, fails (each tried). */
    private static final Case ARCEE = new Case(SynthPreset.ARCEE_TINY, 2e-3, new LlamaCppPath(LlamaCppPath.PROMPT,
        new int[] {
            326, 920, 920, 920, 920, 920, 183, 2, 2, 2, 2, 2, 90, 994, 412, 212},
        new double[] {
            0.12075486177167694, 0.10505143441040055, 0.17426950979693423, 0.128972536232979,
            0.0730898375429776, 0.02039304241554163, 0.021623166022933127, 0.01919055820993254,
            0.14396145656163384, 0.1545537718822585, 0.1169661832793345, 0.043157748649885086,
            0.0514211013260919, 0.05237504237852608, 0.06503935358944446, 0.2728786519041382}));

    /** Seed-OSS: the llama graph with Q/K/V biases, NeoX pairs, the FFN norm named
     * post_attention_norm. The same 16 tokens, agreement 8.7e-4; normal pairs fail (tried). */
    private static final Case SEED_OSS = new Case(SynthPreset.SEED_OSS_TINY, 2e-3, new LlamaCppPath(LlamaCppPath.PROMPT,
        new int[] {
            632, 544, 632, 632, 632, 632, 632, 632, 632, 632, 632, 632, 88, 88, 88, 88},
        new double[] {
            0.05262425749965871, 0.10751107668255422, 0.20646812729148944, 0.09897203394746601,
            0.11520101386139459, 0.08925942308098822, 0.06849024298275364, 0.05236080919327879,
            0.03938177270246346, 0.027786488025529188, 0.017249427821366403, 0.0020854657644173713,
            0.01758235138964004, 0.004192340773482073, 0.011523731064073672, 0.017828774228464184}));

    /** SmolLM3: four layers, the fourth unrotated. Agreement 7.7e-4; rotating it fails (tried). */
    private static final Case SMOLLM3 = new Case(SynthPreset.SMOLLM3_TINY, 2e-3, new LlamaCppPath(LlamaCppPath.PROMPT,
        new int[] {
            1008, 1008, 1008, 1008, 1008, 1008, 1008, 1008, 1008, 1008, 1008, 1008, 1008, 1008, 1008, 1008},
        new double[] {
            0.009833662405566379, 0.5839024655599525, 0.5804625768426659, 0.581053662327677,
            0.5525173909916914, 0.5020322555306596, 0.46712078108535504, 0.43364288340249146,
            0.4107782849379493, 0.3940373923202012, 0.3784740901231114, 0.36184593761628836,
            0.3465823630400262, 0.33586284726345106, 0.330019123468257, 0.3275675943985519}));

    /** Phi-3: fused attn_qkv and gate+up (gate first), NeoX pairs, LongRoPE's short factors (the
     * context is within the original one) and magnitude factor. The same 16 tokens, agreement
     * 8.0e-4; without the factors, without the magnitude, with gate and up swapped or with normal
     * pairs it fails (each tried). */
    private static final Case PHI3 = new Case(SynthPreset.PHI3_TINY, 2e-3, new LlamaCppPath(LlamaCppPath.PROMPT,
        new int[] {
            8480, 18720, 18720, 18720, 4889, 26821, 8480, 18720, 18720, 18720, 20617, 18720, 20617, 17491,
            20617, 17491},
        new double[] {
            0.008481026485361198, 0.04163148112621329, 0.08599884795976465, 0.00505444830464441,
            0.030005467019295295, 0.032215862186037114, 0.13635930491789594, 0.06925896453343938,
            0.10546308173664443, 0.02320916757059699, 0.025836710236934124, 0.113848054657824,
            0.09093941759532775, 0.003083590337590536, 0.1897576671752308, 0.05428590470879513}));

    /** OLMo 2: no pre-norms, all of Q and K normed before NeoX pairs, branch-output norms. Agreement
     * 1.2e-3; the paths part at step 4, a 0.0003 near-tie the check leaves to either order; normal
     * pairs or per-head norms fail (each tried). */
    private static final Case OLMO2 = new Case(SynthPreset.OLMO2_TINY, 3e-3, new LlamaCppPath(LlamaCppPath.PROMPT,
        new int[] {
            977, 665, 43, 881, 665, 893, 907, 535, 179, 535, 179, 179, 179, 179, 179, 179},
        new double[] {
            0.052902270030386056, 0.029304418723826053, 0.07003529103819073, 0.0002572503094642187,
            0.16541759020905467, 0.1943890366035319, 0.09126998248058182, 0.07855225272767896,
            0.0098750634663487, 0.01243584561515032, 0.07402686134321979, 0.17396330628781698,
            0.20260422734108996, 0.22476084807971208, 0.169688908472863, 0.15620430367168137}));

    /** EXAONE 3.x: the llama graph, NeoX pairs. Agreement 7.0e-4; with normal pairs 0.035 (tried). */
    private static final Case EXAONE = new Case(SynthPreset.EXAONE_TINY, 2e-3, new LlamaCppPath(LlamaCppPath.PROMPT,
        new int[] {
            641, 641, 641, 641, 641, 641, 641, 641, 641, 641, 641, 641, 641, 641, 641, 641},
        new double[] {
            0.0010088959706067158, 0.055224500761986484, 0.04749350379329531, 0.03190189723974335,
            0.033524658482734004, 0.04280124224320225, 0.054622463606939675, 0.06628564273821791,
            0.07606757596617886, 0.08382622966760422, 0.08919777141180685, 0.09404892956498756,
            0.09805293033111973, 0.10077065779970606, 0.10253015575267899, 0.10426750774200855}));

    /** ERNIE 4.5 (dense): the llama graph, normal pairs. Agreement 7.1e-4; with NeoX pairs it fails (tried). */
    private static final Case ERNIE = new Case(SynthPreset.ERNIE_TINY, 2e-3, new LlamaCppPath(LlamaCppPath.PROMPT,
        new int[] {
            950, 950, 950, 950, 950, 950, 950, 950, 950, 950, 950, 950, 950, 950, 950, 950},
        new double[] {
            0.002456220225306005, 1.2047742155159744, 1.2195298698799295, 1.204330998627884,
            1.1874618427152086, 1.1678785707999388, 1.1461046479839334, 1.123118407362317, 1.101038547110882,
            1.0730495974590584, 0.9998318795530494, 0.9343748281895685, 0.8758246156255511,
            0.8242144514477454, 0.7766228550371563, 0.7324988840739124}));

    /** Mixtral under {@code llama}: eight experts, two per token, softmax routing renormalised over
     * the two. Agreement 6.6e-4; without the renormalisation, with equal weights or
     * with the least probable experts it fails (each tried). */
    private static final Case MIXTRAL = new Case(SynthPreset.MIXTRAL_TINY, 2e-3, new LlamaCppPath(LlamaCppPath.PROMPT,
        new int[] {
            112, 112, 112, 112, 112, 112, 112, 112, 112, 112, 112, 112, 112, 112, 112, 112},
        new double[] {
            0.2068683150280819, 0.29036547402052104, 0.44325086203915554, 0.5235905073402352,
            0.5788303555027339, 0.5621495589869934, 0.5163941207136915, 0.45688821231436183,
            0.4026245393717316, 0.3580073814064457, 0.31342933256704075, 0.2754967203282801,
            0.24429538269455175, 0.16737366042980728, 0.1373868545734691, 0.10887008427752498}));

    /** Qwen2-MoE: Qwen2's attention, eight experts with two per token not renormalised, and a shared
     * expert behind a sigmoid gate. Agreement 5.2e-4; without the shared expert, without its
     * sigmoid or with the weights renormalised it fails (each tried). */
    private static final Case QWEN2MOE = new Case(SynthPreset.QWEN2MOE_TINY, 2e-3, new LlamaCppPath(LlamaCppPath.PROMPT,
        new int[] {
            523, 125, 125, 125, 125, 125, 125, 125, 125, 125, 125, 125, 125, 125, 125, 125},
        new double[] {
            0.003964925248899576, 0.221544971256721, 0.26784525120596214, 0.2664117096687413,
            0.28193906925706624, 0.3000492882319383, 0.2963407307441761, 0.27996105911198566,
            0.252061402022866, 0.21952882192447376, 0.1912909681761814, 0.16751034394295772,
            0.14914080992963008, 0.13404283718375432, 0.12070452273038601, 0.10780181266014033}));

    /** OLMoE: whole-Q/K norms with pre-norms, eight experts with two per token not renormalised.
     * Agreement 8.5e-4; renormalised or with normal pairs it
     * fails (each tried); without the Q/K norms the file is refused (its norm tensors unread). */
    private static final Case OLMOE = new Case(SynthPreset.OLMOE_TINY, 2e-3, new LlamaCppPath(LlamaCppPath.PROMPT,
        new int[] {
            513, 513, 248, 513, 460, 513, 460, 549, 549, 549, 549, 549, 549, 549, 937, 549},
        new double[] {
            0.3311617161093716, 0.04681560342710078, 0.0077331128801532145, 0.06610552523741298,
            0.022567590571892282, 0.03302898945915356, 0.04543359492761034, 0.11778513387174705,
            0.16378663587997266, 0.27022715053903745, 0.26350077238789016, 0.25899132015751913,
            0.1896666339301465, 0.05743669612668878, 0.062269036571702685, 0.09655801640699213}));

    /** Granite MoE Shared (granitemoe): Granite's multipliers, eight experts with two per token
     * renormalised, an ungated shared expert. Agreement 1.2e-3 (relative to the top logit, which the
     * logit multiplier doubles); without the shared
     * expert or without the multipliers it fails (each tried). */
    private static final Case GRANITEMOE = new Case(SynthPreset.GRANITEMOE_TINY, 5e-3, new LlamaCppPath(LlamaCppPath.PROMPT,
        new int[] {
            730, 730, 730, 730, 730, 730, 730, 730, 730, 730, 730, 730, 730, 730, 730, 730},
        new double[] {
            0.307932609834225, 0.9334831045221357, 0.9380920204462235, 0.9195859279015677,
            0.8464000785208201, 0.8026905177726844, 0.6777562395519903, 0.5497775863520324,
            0.45006965798343757, 0.39133500561134493, 0.3773808662556597, 0.388698108117973,
            0.403149881812106, 0.41378550441517525, 0.4126289363539257, 0.39780834213848415}));

    /** Qwen3-MoE: Qwen3's attention, sixteen experts, four per token. Agreement 7.4e-4; the same three mutations fail it. */
    private static final Case QWEN3MOE = new Case(SynthPreset.QWEN3MOE_TINY, 2e-3, new LlamaCppPath(LlamaCppPath.PROMPT,
        new int[] {
            637, 637, 637, 637, 637, 637, 637, 637, 637, 637, 898, 898, 898, 898, 898, 898},
        new double[] {
            0.023159143910138624, 0.5629369296485232, 0.4570909879898597, 0.3941600991562,
            0.3607573972995741, 0.29641892468183517, 0.21548945419743237, 0.1405939792428441,
            0.07797594585170842, 0.02435247357533754, 0.02710731682145262, 0.7304073348675422,
            0.6214177922663628, 0.6121649233812256, 0.5955003664547265, 0.5586549029835206}));

    /** Phi-3.5-MoE: Phi-3's LongRoPE with a bias after every RMS norm, Q/K/V, attention-output and
     * logit biases, Mixtral's routing over eight experts. Agreement 4.5e-4; without the norm biases
     * 0.098 (tried). */
    private static final Case PHIMOE = new Case(SynthPreset.PHIMOE_TINY, 2e-3, new LlamaCppPath(LlamaCppPath.PROMPT,
        new int[] {
            8989, 14478, 24518, 8989, 8989, 8989, 8989, 8989, 8989, 8989, 8989, 8989, 8989, 8989, 8989, 357},
        new double[] {
            0.03757809913479626, 0.0457490697843248, 0.012460711183145179, 0.04126273319458029,
            0.021002723986546457, 0.023747213249285082, 0.022946691231705785, 0.028528470313537113,
            0.02450709131806761, 0.021853981537901745, 0.02038312327547409, 0.018896356615359267,
            0.014835753003318075, 0.008758003424661709, 0.0016162518153208794, 0.004416330945542057}));

    /** Llama 4: the fourth layer unrotated, Q/K heads RMS-normalised after the rotation on the
     * others, experts on layers 1 and 3 (sigmoid, top 1, the weight on the expert's input) with a
     * shared expert, dense FFNs between. Agreement 9.4e-4; without the Q/K norms 0.66, with the
     * weight on the output instead 0.0056 (both tried). */
    private static final Case LLAMA4 = new Case(SynthPreset.LLAMA4_TINY, 2e-3, new LlamaCppPath(LlamaCppPath.PROMPT,
        new int[] {
            838, 592, 347, 22, 434, 874, 720, 347, 347, 347, 874, 720, 347, 874, 720, 347},
        new double[] {
            0.012270662703915747, 0.1335633712298261, 0.21153456726965292, 0.19128158391690775,
            0.012061179391796628, 0.010000604254892131, 0.03350998151015272, 0.22236291735498437,
            0.0032884822261713964, 0.007661470317159136, 0.051322467526823345, 0.07248018129029088,
            0.042323380743831684, 0.09387220296810028, 0.07802689292972698, 0.03566493667145121}));

    /** ERNIE 4.5 MoE: a dense first layer, then eight experts chosen by softmax plus the
     * {@code exp_probs_b} bias, weighed renormalised without it, and a shared expert. Agreement
     * 1.2e-3 on the path (one prompt position 0.016, where the second choice nearly ties). */
    private static final Case ERNIE4_5_MOE = new Case(SynthPreset.ERNIE4_5_MOE_TINY, 2e-3, new LlamaCppPath(LlamaCppPath.PROMPT,
        new int[] {
            152, 152, 152, 152, 152, 152, 152, 152, 152, 152, 46, 46, 46, 46, 46, 46},
        new double[] {
            0.017858491851272085, 0.3173666134423341, 0.28468930348375476, 0.27665084566766485,
            0.28632426973622493, 0.25867040255061635, 0.1900362493937493, 0.1305424872096541,
            0.07577730063891241, 0.027730487253162295, 0.009033902015259443, 0.23990501501117656,
            0.27095531322649435, 0.2987066275390049, 0.31976728885209216, 0.33240940709362565}));

    /** Command R7B ({@code cohere2}): Command R's parallel LayerNorm blocks, three window-8 layers
     * to one global unrotated. Agreement 3.5e-4; the global layer rotated 0.0068, no window 0.39
     * (both tried). */
    private static final Case COHERE2 = new Case(SynthPreset.COHERE2_TINY, 2e-3, new LlamaCppPath(LlamaCppPath.PROMPT,
        new int[] {
            736, 736, 736, 736, 736, 736, 736, 675, 675, 675, 675, 675, 675, 675, 675, 736},
        new double[] {
            0.06343779969700414, 0.28394974584618815, 0.26902406138072976, 0.22998637994363147,
            0.17366123643763398, 0.11645131005427878, 0.01729927085070848, 0.021148972943403344,
            0.20832124453821077, 0.1805153355319007, 0.15638613957571046, 0.12789630824611198,
            0.09604111960284634, 0.07302842376710039, 0.0033942049459492196, 0.07944482202082881}));

    /** dots.llm1 ({@code dots1}): Qwen3's per-head Q/K norms, a dense first layer, then experts with
     * DeepSeek-V3's routing (sigmoid, choice bias, renormalised, ×2.5) and a shared one. Agreement 1.0e-3. */
    private static final Case DOTS1 = new Case(SynthPreset.DOTS1_TINY, 2e-3, new LlamaCppPath(LlamaCppPath.PROMPT,
        new int[] {
            921, 578, 344, 578, 368, 780, 344, 578, 368, 308, 1024, 152, 868, 748, 308, 308},
        new double[] {
            0.01224952186508066, 0.27314788447826466, 0.09888999914021479, 0.13458129027572596,
            0.018084657296117967, 0.13314213098371486, 0.06879790703999067, 0.030601840923595525,
            0.09872870256555721, 0.0223232340668984, 0.010767869372142691, 0.02801559276812693,
            0.0012039193991961739, 0.04679288664231862, 0.16045598023216456, 0.15795163817817848}));

    /** Hunyuan-A13B ({@code hunyuan-moe}): per-head Q/K norms after the rotation, experts with an
     * ungated shared expert on every layer. Agreement 8.9e-4; the norms before the rotation 0.023 (tried). */
    private static final Case HUNYUAN_MOE = new Case(SynthPreset.HUNYUAN_MOE_TINY, 2e-3, new LlamaCppPath(LlamaCppPath.PROMPT,
        new int[] {
            685, 998, 589, 478, 615, 328, 699, 594, 230, 401, 174, 488, 259, 397, 401, 618},
        new double[] {
            0.023503112764077017, 0.0490023079769184, 0.0404754796931881, 0.05780573757007357,
            0.18246600475831354, 0.028397452770087206, 0.07041923871642908, 0.013920889552797355,
            0.21259887801596822, 0.005494805434198113, 0.06217932911985358, 0.0967775809388387,
            0.039152340469041036, 0.0849650453748918, 0.03191934774986116, 0.0312265293432068}));

    /** Ling ({@code bailingmoe}): experts on every layer, softmax, three of eight renormalised, one
     * shared expert. Agreement 6.1e-4 (with two used, one position near a routing tie differed by 0.023). */
    private static final Case BAILINGMOE = new Case(SynthPreset.BAILINGMOE_TINY, 2e-3, new LlamaCppPath(LlamaCppPath.PROMPT,
        new int[] {
            849, 398, 893, 849, 398, 398, 195, 849, 398, 741, 18, 875, 195, 195, 195, 195},
        new double[] {
            0.19232571019165956, 0.11895629024590804, 0.10043240700166134, 0.20208589043535952,
            0.13366449923908696, 0.04301614174255963, 0.02830935366445342, 0.06736938181358099,
            0.03968696954017226, 0.02002221999192777, 0.005037064519311407, 0.0773553728821117,
            0.09111825741211099, 0.04125980207633084, 0.05330240378245232, 0.029105106640490597}));

    /** Hunyuan dense: per-head Q/K norms after the rotation, a dense SwiGLU FFN. Agreement 1.1e-3. */
    private static final Case HUNYUAN_DENSE = new Case(SynthPreset.HUNYUAN_DENSE_TINY, 2e-3, new LlamaCppPath(LlamaCppPath.PROMPT,
        new int[] {
            612, 914, 399, 510, 914, 914, 279, 914, 279, 914, 279, 914, 279, 914, 279, 914},
        new double[] {
            0.1220624192838935, 0.012562239392243768, 0.1385997853552947, 0.040388982927908934,
            0.21894562097589088, 0.041410557255204594, 0.012009934798970612, 0.43489899773512075,
            0.06815491762497228, 0.37839456619965706, 0.09022614859867417, 0.20419756247913767,
            0.05949804901514533, 0.10965012366052207, 0.20480160141040749, 0.09522891043105108}));

    /** Mistral 3 ({@code mistral3}): every layer's Q times the position temperature after the
     * rotation (scale 0.5 over an original context of 16, so the path crosses it). Agreement 6.5e-4;
     * without the temperature 0.017 (tried). */
    private static final Case MISTRAL3 = new Case(SynthPreset.MISTRAL3_TINY, 2e-3, new LlamaCppPath(LlamaCppPath.PROMPT,
        new int[] {
            152, 152, 152, 152, 152, 152, 152, 152, 152, 748, 152, 748, 152, 748, 152, 748},
        new double[] {
            0.10907019560269582, 0.2865452185295201, 0.29783820374195447, 0.29760864033536905,
            0.21067210750583598, 0.14407075885075038, 0.08817484851419088, 0.04366891292502206,
            0.010635224187976355, 0.009827362065802703, 0.15345066316447653, 0.01932700093991091,
            0.12508557459165992, 0.028724633292686264, 0.05871610915824643, 0.02493577849528883}));

    /** DeepSeek-MoE ({@code deepseek}): a dense first layer, then softmax experts ×2.5, not
     * renormalised, and a shared one. Agreement 9.2e-4; without the scale 0.21 (tried). */
    private static final Case DEEPSEEK = new Case(SynthPreset.DEEPSEEK_TINY, 2e-3, new LlamaCppPath(LlamaCppPath.PROMPT,
        new int[] {
            152, 152, 152, 152, 46, 46, 46, 46, 46, 46, 46, 46, 46, 46, 46, 46},
        new double[] {
            0.017100384518919043, 0.127429446309959, 0.07946320473312429, 0.058457713318706084,
            0.006237387564645758, 0.24381479738928835, 0.24803166078596295, 0.22597137304033232,
            0.171730768122627, 0.20571790195688955, 0.1183726961121856, 0.17034231245806986,
            0.21675628853252604, 0.25700547211198455, 0.2893809061102033, 0.3126494171910217}));

    /** Nemotron: LayerNorm with biases, half of each head rotated with NeoX pairs, an ungated
     * squared-ReLU FFN with biases. Agreement 7.8e-4. */
    private static final Case NEMOTRON = new Case(SynthPreset.NEMOTRON_TINY, 2e-3, new LlamaCppPath(LlamaCppPath.PROMPT,
        new int[] {
            389, 724, 659, 659, 659, 659, 659, 862, 862, 862, 862, 389, 862, 389, 862, 389},
        new double[] {
            0.11056319895309841, 0.1098298986673587, 0.0012407370089260183, 0.11979140788138665,
            0.12863009702152262, 0.07250596100713214, 0.001993088897467743, 0.0747827721930383,
            0.0010988325526701814, 0.030937426039959526, 0.006401014341726352, 0.018050376191364848,
            0.08046966078987161, 0.0401535565868576, 0.03311825747939334, 0.007685796782392451}));

    /** MiniMax-M2: whole-Q and whole-K norms, half of each head rotated, sigmoid experts with a
     * choice bias, renormalised. Agreement 8.8e-4 on sixteen different tokens. */
    private static final Case MINIMAX_M2 = new Case(SynthPreset.MINIMAX_M2_TINY, 2e-3, new LlamaCppPath(LlamaCppPath.PROMPT,
        new int[] {
            566, 197, 423, 501, 811, 27, 740, 501, 852, 30, 539, 225, 50, 200, 235, 501},
        new double[] {
            0.057602218911247505, 0.10909267166112979, 0.0021343830471423075, 0.2987039809604557,
            0.19015129602017566, 0.04999744748675283, 0.01926201670781058, 0.1319968906003144,
            0.005595609001978197, 0.21625102860461354, 0.1122172335589493, 0.008703942119414165,
            0.1553778275713542, 0.05459630907145829, 0.05292121920645432, 0.005115642935147768}));

    /** 150 token ids (seeded, below 1024): long enough that window-8 layers give back two pages of K/V. */
    private static final int[] LONG_PROMPT = {
        466, 889, 576, 880, 949, 802, 479, 465, 523, 878, 604, 197, 192, 826, 527, 490, 647, 631, 815, 193,
        99, 460, 313, 148, 95, 554, 832, 914, 713, 652, 45, 612, 1008, 408, 990, 466, 672, 759, 633, 668,
        164, 641, 18, 854, 544, 67, 63, 39, 197, 903, 250, 617, 33, 799, 478, 337, 454, 608, 865, 203,
        534, 242, 658, 304, 514, 7, 681, 90, 471, 673, 287, 419, 567, 1022, 957, 863, 88, 727, 263, 325,
        779, 238, 528, 298, 33, 74, 579, 787, 113, 413, 113, 869, 300, 398, 71, 984, 20, 870, 704, 3,
        221, 217, 952, 935, 56, 484, 387, 1006, 728, 409, 432, 77, 582, 647, 206, 800, 694, 279, 347, 92,
        321, 343, 18, 990, 422, 779, 947, 123, 140, 255, 726, 106, 14, 64, 479, 819, 501, 184, 701, 575,
        195, 461, 524, 198, 1011, 752, 790, 137, 432, 662};

    /** Gemma 3 past its window: llama.cpp's path after LONG_PROMPT, decoded step by step while the
     * local layers give back their old pages. Agreement 9.4e-4 over 165 positions. */
    private static final Case GEMMA3_LONG = new Case(SynthPreset.GEMMA3_TINY, 5e-3, new LlamaCppPath(LONG_PROMPT,
        new int[] {
            421, 421, 491, 729, 729, 729, 729, 207, 207, 207, 182, 182, 407, 997, 997, 997},
        new double[] {
            0.1541446531481414, 0.2449928484778141, 0.024729271115623952, 0.059138222450010325,
            0.5113439032857308, 0.1521000320600221, 0.05409931823952263, 0.13063688542461094,
            0.17458471794761898, 0.020467339644191895, 0.0030572886218642736, 0.14838524156584576,
            0.007764022892041922, 0.15828490612042945, 0.3406544416212425, 0.1756772602281762}));

    /** Gemma 2 past its window, the same way. Agreement 7.3e-4 over 165 positions. */
    private static final Case GEMMA2_LONG = new Case(SynthPreset.GEMMA2_TINY, 2e-3, new LlamaCppPath(LONG_PROMPT,
        new int[] {
            438, 438, 438, 480, 91, 91, 91, 91, 91, 91, 91, 91, 91, 91, 91, 91},
        new double[] {
            0.05492024934550699, 0.12160180996627723, 0.14669525318653331, 0.08010143465218889,
            0.031563253018841664, 0.6958514828978926, 0.612039240612468, 0.48504876329131363,
            0.5086218081052181, 0.3375551066252669, 0.15686574851117552, 0.07517662188134366,
            0.043649832863904336, 0.0616576026068012, 0.06551699713962389, 0.06129411952790065}));

    /** OLMo 3 (olmo2 with a window): three window-8 layers rotating unscaled, one global with YaRN
     * ×4, past the window the same way. Agreement 9.8e-4 over 165 positions; without the window, with
     * the global rotation on window layers or with every other layer local it fails (each tried). */
    private static final Case OLMO3_LONG = new Case(SynthPreset.OLMO3_TINY, 3e-3, new LlamaCppPath(LONG_PROMPT,
        new int[] {
            214, 856, 484, 160, 230, 256, 953, 326, 230, 1022, 159, 216, 17, 283, 325, 247},
        new double[] {
            0.020399678850822944, 0.09810599165538036, 0.024952248771609398, 0.2237633356825457,
            0.03166942559461017, 0.08423024372390664, 0.048467031736347366, 0.016869550947657963,
            0.06610398291903419, 0.40211484105465534, 0.1365679799596462, 0.26985192806719294,
            0.07736274544421207, 0.10204464179949735, 0.09500416041757376, 0.042141112337676034}));

    @TempDir
    static Path dir;

    static Stream<Arguments> cases() {
        return Stream.of(TinyModels.KINDS).flatMap(k -> Stream.of(QWEN2, QWEN3, GRANITE, MINICPM, GEMMA, GEMMA2, GEMMA3, STABLELM, STARCODER2, GPTNEOX, GPT2, COMMAND_R, PHI2, SMOLLM2, SMOLLM3, EXAONE4, EXAONE4_SWA, GLM4, ARCEE, SEED_OSS, PHI3, PHIMOE, LLAMA4, ERNIE4_5_MOE, COHERE2, DOTS1, HUNYUAN_MOE, HUNYUAN_DENSE, BAILINGMOE, MISTRAL3, DEEPSEEK, NEMOTRON, MINIMAX_M2, OLMO2, EXAONE, ERNIE, XVERSE, INTERNLM2, MIXTRAL, QWEN2MOE, OLMOE, GRANITEMOE, QWEN3MOE, DEEPSEEK2, DEEPSEEK2_KVB, DEEPSEEK2_LITE, GLM4MOE, GLM4MOE_QKNORM, GPT_OSS, STABLELM_QK, COMMAND_R_QK)
                .map(c -> Arguments.of(c, k)));
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("cases")
    void greedyPathAndMarginsMatchLlamaCpp(Case c, EngineOptions.Kind kind) {
        EngineOptions opts = EngineOptions.defaults().withKind(kind).withThreads(2).withMaxRows(32);
        try (Engine e = Engines.load(model(c.preset()), opts)) {
            assertThat(e.info().architecture()).isEqualTo(c.preset().architecture());
            c.llamaCpp().assertMatches(e, c.tolerance());
        }
    }

    /**
     * Sliding-window models decoded step by step after a 150-token prompt agree with llama.cpp, and
     * with the same positions run in one forward to the bit, although by then the window-8 layers
     * have given back every page before position 128: what they gave back was never read again.
     */
    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("longCases")
    void slidingWindowLayersPastTheirWindowMatchLlamaCpp(Case c, EngineOptions.Kind kind) {
        EngineOptions opts = EngineOptions.defaults().withKind(kind).withThreads(2).withMaxRows(256);
        try (Engine e = Engines.load(model(c.preset()), opts)) {
            float[][] stepwise = c.llamaCpp().stepwise(e);
            c.llamaCpp().assertMatches(stepwise, c.tolerance());
            float[][] whole = c.llamaCpp().teacherForced(e);
            for (int k = 0; k < whole.length; k++) assertThat(stepwise[k]).as("step %d", k).isEqualTo(whole[k]);
        }
    }

    static Stream<Arguments> longCases() {
        return Stream.of(TinyModels.KINDS).flatMap(k -> Stream.of(GEMMA3_LONG, GEMMA2_LONG, OLMO3_LONG).map(c -> Arguments.of(c, k)));
    }

    /**
     * Phi-3 with an 8192 context (past the original 4096) after a 4200-token prompt: llama.cpp's
     * greedy path and margins there (recorded with {@code --ctx 8192 --no-tf}); dgr replays it
     * with the long factors. With the short factors forced it fails (tried).
     */
    private static final LlamaCppPath PHI3_LONG = new LlamaCppPath(new java.util.SplittableRandom(5).ints(4200, 3, 32000).toArray(),
        new int[] {
            23271, 18441, 26642, 21419, 14367, 14018, 10050, 4043, 30885, 16371, 24122, 28833, 3357, 363, 7978, 12528},
        new double[] {
            0.030729638734252163, 0.07807386203586297, 0.08888018557061805, 0.038710604109875035,
            0.07578578830757543, 0.05110663853805342, 0.005879059225264882, 0.017612944754613835,
            0.027865319268448374, 0.010150282960001533, 0.09739544851559678, 0.04164681558138028,
            0.0017556892310839345, 0.03822578400213139, 0.27101420565299605, 0.25522764471720727});

    @Test
    void phi3PastTheOriginalContextMatchesLlamaCppWithTheLongFactors() {
        EngineOptions opts = EngineOptions.defaults().withThreads(2).withMaxRows(256).withContextLength(8192);
        try (Engine e = Engines.load(model(SynthPreset.PHI3_TINY), opts)) {
            PHI3_LONG.assertMatches(PHI3_LONG.stepwise(e, 256), 2e-3);
        }
    }

    /**
     * Llama 4 past its first 8192-position chunk: llama.cpp's top token and top-1 − top-2 margin at
     * positions 8184–8703 of 8704 seeded tokens, teacher-forced ({@code llamacpp/llama4-tiny-8704.json}
     * says how it was recorded): from 8192 the three chunked layers attend only within the new
     * chunk, and the unrotated layer's Q takes the temperature {@code 1 + 0.1·ln 2} from 8191.
     * Agreement 3.6e-4 over those 520 positions; without chunks 0.4–0.9, every layer chunked 0.35,
     * the chunk starting one position early 0.6 (all tried). (llama.cpp's own small batches past
     * a few thousand positions, its decode steps included, drift from its large ones by up to
     * 0.08 on this model, so the path recorded here comes from one full 512-token batch.)
     */
    @Test
    void llama4PastItsFirstChunkMatchesLlamaCpp() throws java.io.IOException {
        com.fasterxml.jackson.databind.JsonNode ref;
        try (var in = LlamaCppCrossCheckTest.class.getResourceAsStream("/llamacpp/llama4-tiny-8704.json")) {
            ref = new com.fasterxml.jackson.databind.ObjectMapper().readTree(in);
        }
        int[] tokens = new java.util.SplittableRandom(5).ints(8704, 3, 1024).toArray();
        int first = ref.get("positions").get(0).asInt();
        EngineOptions opts = EngineOptions.defaults().withThreads(2).withMaxRows(256).withContextLength(8960);
        try (Engine e = Engines.load(model(SynthPreset.LLAMA4_TINY), opts); dgr.engine.StateSlot slot = e.openSlot()) {
            dgr.engine.Batch batch = new dgr.engine.Batch(256, e.boundarySchema().rowWidth());
            float[][] rows = new float[tokens.length - first][];
            for (int at = 0; at < tokens.length; at += 256) {
                batch.clear();
                for (int p = at; p < Math.min(tokens.length, at + 256); p++) batch.addToken(slot, p, tokens[p], p >= first);
                dgr.engine.ForwardResult r = e.forward(batch);
                for (int i = 0; i < batch.size(); i++) {
                    int p = at + i;
                    if (p < first) continue;
                    int o = r.outputOffset(i);
                    rows[p - first] = java.util.Arrays.copyOfRange(r.outputArray(), o, o + r.outputWidth());
                }
            }
            int[] top = new int[rows.length];
            double[] margin = new double[rows.length];
            for (int k = 0; k < rows.length; k++) {
                top[k] = ref.get("top").get(k).asInt();
                margin[k] = ref.get("margin").get(k).asDouble();
            }
            new LlamaCppPath(new int[0], top, margin).assertMatches(rows, 2e-3);
        }
    }

    /** Phi-3 past its original context (4096 here) rotates with the long factors, as llama.cpp chooses. */
    @Test
    void phi3PastTheOriginalContextRotatesWithTheLongFactors() {
        Path model = model(SynthPreset.PHI3_TINY);
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

    private static synchronized Path model(SynthPreset preset) {
        Path model = dir.resolve(preset.name() + "-F32.gguf");
        if (!Files.exists(model)) Synth.write(preset, QuantMix.parse("F32"), 42, model);
        return model;
    }
}
