package dgr.gguf.arch;

import dgr.gguf.arch.Architecture.QkNorm;
import java.util.List;

/**
 * The architectures of the llama graph and what shapes their blocks, one line each: the one table
 * both the engine's {@code LlamaVariant} (which reads these files) and {@code Synth} (which writes
 * them) consult, so what a {@code qwen3} or {@code phi2} file holds is stated once. It lives in
 * gguf because the engine depends on gguf and synth lives here. How an architecture routes its
 * experts and reads its metadata stays with the engine's variant.
 */
public final class Architectures {
    private Architectures() {}

    public static final Architecture LLAMA = named("llama");
    public static final Architecture MISTRAL3 = named("mistral3");
    public static final Architecture MISTRAL = named("mistral");
    public static final Architecture EXAONE = named("exaone").withNeox();
    public static final Architecture ERNIE4_5 = named("ernie4_5");
    public static final Architecture ERNIE4_5_MOE = named("ernie4_5-moe");
    public static final Architecture XVERSE = named("xverse");
    public static final Architecture INTERNLM2 = named("internlm2");
    public static final Architecture EXAONE4 = named("exaone4").withNeox().withQkNorm(QkNorm.PER_HEAD).withoutPreNorms().withPostNorms();
    public static final Architecture GLM4 = named("glm4").withPostNorms();
    public static final Architecture ARCEE = named("arcee").withUngatedFfn();
    public static final Architecture SEED_OSS = named("seed_oss").withNeox().withFfnNormTensor("post_attention_norm");
    public static final Architecture GPT_OSS = named("gpt-oss").withNeox().withFfnNormTensor("post_attention_norm");
    public static final Architecture SMOLLM3 = named("smollm3").withNoRopeStep(4);
    public static final Architecture QWEN2 = named("qwen2").withNeox();
    public static final Architecture QWEN3 = named("qwen3").withNeox().withQkNorm(QkNorm.PER_HEAD);
    public static final Architecture QWEN2MOE = named("qwen2moe").withNeox();
    public static final Architecture OLMOE = named("olmoe").withNeox().withQkNorm(QkNorm.WHOLE);
    public static final Architecture DOTS1 = named("dots1").withNeox().withQkNorm(QkNorm.PER_HEAD);
    public static final Architecture HUNYUAN_MOE = named("hunyuan-moe").withNeox().withQkNorm(QkNorm.PER_HEAD);
    public static final Architecture BAILINGMOE = named("bailingmoe");
    public static final Architecture HUNYUAN_DENSE = named("hunyuan-dense").withNeox().withQkNorm(QkNorm.PER_HEAD);
    public static final Architecture DEEPSEEK = named("deepseek");
    public static final Architecture MINIMAX_M2 = named("minimax-m2").withNeox().withQkNorm(QkNorm.WHOLE);
    public static final Architecture QWEN3MOE = named("qwen3moe").withNeox().withQkNorm(QkNorm.PER_HEAD);
    public static final Architecture LLAMA4 = named("llama4");
    public static final Architecture PHI3 = named("phi3").withNeox();
    public static final Architecture PHIMOE = named("phimoe").withNeox();
    public static final Architecture OLMO2 = named("olmo2").withNeox().withQkNorm(QkNorm.WHOLE).withoutPreNorms().withPostNorms();
    public static final Architecture GRANITEMOE = named("granitemoe");
    public static final Architecture GRANITE = named("granite");
    public static final Architecture MINICPM = named("minicpm");
    public static final Architecture DEEPSEEK2 = named("deepseek2");
    public static final Architecture GLM4MOE = named("glm4moe").withNeox().withFfnNormTensor("post_attention_norm");
    public static final Architecture GEMMA = named("gemma").withNeox().withGelu();
    public static final Architecture GEMMA2 = named("gemma2").withNeox().withPostNorms().withGelu();
    public static final Architecture GEMMA3 = named("gemma3").withNeox().withQkNorm(QkNorm.PER_HEAD).withPostNorms().withGelu();
    public static final Architecture STABLELM = named("stablelm").withNeox().withLayerNorm(true, false);
    public static final Architecture STARCODER2 = named("starcoder2").withNeox().withGelu().withLayerNorm(true, true).withUngatedFfn();
    public static final Architecture GPTNEOX = named("gptneox").withNeox().withGelu().withLayerNorm(true, true).withUngatedFfn();
    public static final Architecture GPT2 = named("gpt2").withGelu().withNoRopeStep(1).withLayerNorm(true, true).withUngatedFfn().withLearnedPositions();
    public static final Architecture COMMAND_R = named("command-r").withLayerNorm(false, false).withOneNormBothBranches();
    public static final Architecture COHERE2 = named("cohere2").withLayerNorm(false, false).withOneNormBothBranches();
    public static final Architecture NEMOTRON = named("nemotron").withNeox().withLayerNorm(true, true).withUngatedFfn();
    public static final Architecture PHI2 = named("phi2").withNeox().withGelu().withLayerNorm(true, true).withUngatedFfn().withOneNormBothBranches();

    /** Every architecture of the table, in the engine's order. */
    public static final List<Architecture> ALL = List.of(LLAMA, MISTRAL3, MISTRAL, EXAONE, ERNIE4_5, ERNIE4_5_MOE, XVERSE, INTERNLM2, EXAONE4, GLM4, ARCEE, SEED_OSS, GPT_OSS, SMOLLM3, QWEN2, QWEN3, QWEN2MOE, OLMOE, DOTS1, HUNYUAN_MOE, BAILINGMOE, HUNYUAN_DENSE, DEEPSEEK, MINIMAX_M2, QWEN3MOE, LLAMA4, PHI3, PHIMOE, OLMO2, GRANITEMOE, GRANITE, MINICPM, DEEPSEEK2, GLM4MOE, GEMMA, GEMMA2, GEMMA3, STABLELM, STARCODER2, GPTNEOX, GPT2, COMMAND_R, COHERE2, NEMOTRON, PHI2);

    /** The architecture named {@code name} ({@code general.architecture}), or null when the table has none. */
    public static Architecture of(String name) {
        for (Architecture a : ALL) if (a.name().equals(name)) return a;
        return null;
    }

    /** Llama's shape under another name: RMS norms before each branch, normal pairs, gated SiLU FFN. */
    private static Architecture named(String name) {
        return new Architecture(name, false, QkNorm.NONE, true, false, false, 0, null, false, false, "ffn_norm", false);
    }
}
