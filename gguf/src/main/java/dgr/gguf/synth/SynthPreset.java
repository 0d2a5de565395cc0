package dgr.gguf.synth;

import java.util.List;
import java.util.Locale;

/**
 * A synthetic model shape. Weights are seeded random; the tokenizer is a real vocabulary shipped
 * in the jar ({@code vocab}: a resource under {@code dgr/vocab/}).
 */
public record SynthPreset(String name, String architecture, int nEmbd, int nLayer, int nHead, int nHeadKv,
                          int nFf, int contextLength, float ropeFreqBase, boolean tiedEmbeddings, String vocab, int headDim,
                          Experts experts) {

    /**
     * A mixture-of-experts FFN in every layer: {@code count} experts of width {@code ff}, {@code used}
     * of them per token, picked by an F32 router ({@code ffn_gate_inp}, kept F32 as llama-quantize
     * keeps it), and where {@code sharedFf > 0} a shared expert of that width every token runs
     * (Qwen2-MoE's {@code *_shexp}); null for a dense FFN.
     */
    public record Experts(int count, int used, int ff, int sharedFf) {
        public Experts {
            if (count < 1 || used < 1 || used > count || ff < 1 || sharedFf < 0) {
                throw new IllegalArgumentException("experts: " + used + " used of " + count + ", width " + ff + ", shared " + sharedFf);
            }
        }

        /** Routed experts only. */
        public Experts(int count, int used, int ff) {
            this(count, used, ff, 0);
        }
    }

    /** A dense shape with its own head width. */
    public SynthPreset(String name, String architecture, int nEmbd, int nLayer, int nHead, int nHeadKv, int nFf,
                       int contextLength, float ropeFreqBase, boolean tiedEmbeddings, String vocab, int headDim) {
        this(name, architecture, nEmbd, nLayer, nHead, nHeadKv, nFf, contextLength, ropeFreqBase, tiedEmbeddings, vocab,
                headDim, null);
    }

    /** A shape whose heads split the embedding evenly ({@code head_dim = n_embd / n_head}). */
    public SynthPreset(String name, String architecture, int nEmbd, int nLayer, int nHead, int nHeadKv, int nFf,
                       int contextLength, float ropeFreqBase, boolean tiedEmbeddings, String vocab) {
        this(name, architecture, nEmbd, nLayer, nHead, nHeadKv, nFf, contextLength, ropeFreqBase, tiedEmbeddings, vocab,
                nEmbd / nHead);
    }

    /** Fast enough for unit tests: the conformance llama-tiny shape, 1025-token GPT-2 vocabulary. */
    public static final SynthPreset LLAMA_TINY =
            new SynthPreset("llama-tiny", "llama", 256, 2, 4, 2, 768, 2048, 10000f, false, "tiny-gpt2");
    /** The stories110M shape with Llama-2's SentencePiece vocabulary. */
    public static final SynthPreset LLAMA_110M =
            new SynthPreset("llama-110m", "llama", 768, 12, 12, 12, 2048, 2048, 10000f, false, "llama-spm");
    /** Llama-3.2-1B's shape and Llama-3's byte-level BPE vocabulary (128256 tokens), tied embeddings. */
    public static final SynthPreset LLAMA_1B =
            new SynthPreset("llama-1b", "llama", 2048, 16, 32, 8, 8192, 4096, 500000f, true, "llama-bpe");

    /**
     * llama-tiny's shape under the {@code exaone}, {@code ernie4_5} and {@code internlm2} names: the
     * llama graph; tied embeddings, InternLM2 with its own output head.
     */
    public static final SynthPreset EXAONE_TINY =
            new SynthPreset("exaone-tiny", "exaone", 256, 2, 4, 2, 768, 2048, 1000000f, true, "tiny-gpt2");
    public static final SynthPreset ERNIE_TINY =
            new SynthPreset("ernie4_5-tiny", "ernie4_5", 256, 2, 4, 2, 768, 2048, 500000f, true, "tiny-gpt2");
    public static final SynthPreset XVERSE_TINY =
            new SynthPreset("xverse-tiny", "xverse", 256, 2, 4, 2, 768, 2048, 500000f, false, "tiny-gpt2");
    public static final SynthPreset INTERNLM2_TINY =
            new SynthPreset("internlm2-tiny", "internlm2", 256, 2, 4, 2, 768, 2048, 1000000f, false, "tiny-gpt2");

    /**
     * SmolLM2-135M's attention at two layers: rows of 576 values (not a multiple of 256, so K-quant
     * mixes fall back per tensor as llama-quantize does), nine query heads on three K/V heads,
     * heads of 64, tied embeddings.
     */
    public static final SynthPreset SMOLLM2_TINY =
            new SynthPreset("smollm2-tiny", "llama", 576, 2, 9, 3, 1536, 2048, 100000f, true, "tiny-gpt2");

    /**
     * EXAONE 4.0's blocks (no pre-norms, per-head Q/K norms, branch-output norms): {@code exaone4-tiny}
     * at llama-tiny's width, two layers, global; {@code exaone4-swa-tiny} 64 narrow layers, the
     * depth at which llama.cpp makes three of four layers sliding-window (window 8 here) and leaves
     * the fourth unrotated.
     */
    public static final SynthPreset EXAONE4_TINY =
            new SynthPreset("exaone4-tiny", "exaone4", 256, 2, 4, 2, 768, 2048, 1000000f, true, "tiny-gpt2");
    public static final SynthPreset EXAONE4_SWA_TINY =
            new SynthPreset("exaone4-swa-tiny", "exaone4", 64, 64, 2, 1, 128, 2048, 1000000f, true, "tiny-gpt2");

    /**
     * GLM-4 (0414) at llama-tiny's width, two layers: Q, K, V in one {@code attn_qkv} with its bias,
     * gate and up in one {@code ffn_up}, norms before and after each branch, half of each head
     * rotated (normal pairs), heads of 128.
     */
    public static final SynthPreset GLM4_TINY =
            new SynthPreset("glm4-tiny", "glm4", 256, 2, 4, 2, 768, 2048, 10000f, false, "tiny-gpt2", 128);

    /** llama-tiny's shape as an Arcee model: the FFN ungated, squared ReLU. */
    public static final SynthPreset ARCEE_TINY =
            new SynthPreset("arcee-tiny", "arcee", 256, 2, 4, 2, 768, 2048, 10000f, false, "tiny-gpt2");

    /** llama-tiny's shape as a Seed-OSS model: Q/K/V biases, NeoX pairs, the FFN norm named post_attention_norm. */
    public static final SynthPreset SEED_OSS_TINY =
            new SynthPreset("seed_oss-tiny", "seed_oss", 256, 2, 4, 2, 768, 2048, 10000000f, false, "tiny-gpt2");

    /** llama-tiny's width as a SmolLM3 model: four layers, the fourth without rotation, tied embeddings. */
    public static final SynthPreset SMOLLM3_TINY =
            new SynthPreset("smollm3-tiny", "smollm3", 256, 4, 4, 2, 768, 2048, 10000f, true, "tiny-gpt2");

    /**
     * llama-tiny's width as a Phi-3 model: Q, K and V in one {@code attn_qkv}, gate and up in one
     * {@code ffn_up}, LongRoPE short and long frequency factors, NeoX pairs, its own output head,
     * Llama 2's vocabulary with Phi-3's added control tokens.
     */
    public static final SynthPreset PHI3_TINY =
            new SynthPreset("phi3-tiny", "phi3", 256, 2, 4, 2, 768, 4096, 10000f, false, "phi3-spm");

    /**
     * ERNIE 4.5 MoE's graph at llama-tiny's width: a dense first layer, then eight experts of 256
     * (two used, chosen with the {@code exp_probs_b} bias, renormalised) and a shared expert of 256.
     */
    public static final SynthPreset ERNIE4_5_MOE_TINY = new SynthPreset("ernie4_5-moe-tiny", "ernie4_5-moe", 256, 2, 4, 2, 512, 2048,
            500000f, false, "tiny-gpt2", 64, new Experts(8, 2, 256, 256));

    /**
     * Llama 4's graph at llama-tiny's width, four layers: the fourth unrotated (with Q's
     * temperature), the others chunked with Q/K norms; every second layer eight experts of 256,
     * one used per token, plus a shared expert of 256; dense FFNs of 512 between.
     */
    public static final SynthPreset LLAMA4_TINY = new SynthPreset("llama4-tiny", "llama4", 256, 4, 4, 2, 512, 2048, 500000f,
            false, "tiny-gpt2", 64, new Experts(8, 1, 256, 256));

    /**
     * Phi-3.5-MoE's graph at phi3-tiny's shape: eight experts of width 256, two used per token,
     * biases after every RMS norm and on Q/K/V, the attention output and the logits, LongRoPE factors.
     */
    public static final SynthPreset PHIMOE_TINY = new SynthPreset("phimoe-tiny", "phimoe", 256, 2, 4, 2, 256, 4096, 10000f,
            false, "phi3-spm", 64, new Experts(8, 2, 256));

    /** llama-tiny's shape as a Qwen2 model: Q/K/V biases, NeoX rotary pairs, tied embeddings. */
    public static final SynthPreset QWEN2_TINY =
            new SynthPreset("qwen2-tiny", "qwen2", 256, 2, 4, 2, 768, 2048, 1000000f, true, "tiny-gpt2");

    /**
     * llama-tiny's width as a Qwen3 model: per-head Q and K norms, no biases, NeoX rotary pairs, tied
     * embeddings, and heads of 128 (Q is 512 wide against an embedding of 256, as Qwen3's heads
     * are wider than {@code n_embd / n_head}).
     */
    public static final SynthPreset QWEN3_TINY =
            new SynthPreset("qwen3-tiny", "qwen3", 256, 2, 4, 2, 768, 2048, 1000000f, true, "tiny-gpt2", 128);

    /** llama-tiny's shape as an OLMo 2 model: no pre-norms, Q and K normed whole, a norm on each branch's output, its own output head. */
    public static final SynthPreset OLMO2_TINY =
            new SynthPreset("olmo2-tiny", "olmo2", 256, 2, 4, 2, 768, 2048, 500000f, false, "tiny-gpt2");

    /**
     * olmo2-tiny with OLMo 3's attention: four layers, the first three sliding-window (window 8) and
     * the fourth global; YaRN scaling (×4 from an original 512 positions) on the global layer only.
     */
    public static final SynthPreset OLMO3_TINY =
            new SynthPreset("olmo3-tiny", "olmo2", 256, 4, 4, 2, 768, 2048, 500000f, false, "tiny-gpt2");

    /**
     * A Gemma (1) shape at llama-tiny's width: four layers, heads of 128 sharing one K/V head (as
     * Gemma 2B does), GELU, tied embeddings.
     */
    public static final SynthPreset GEMMA_TINY =
            new SynthPreset("gemma-tiny", "gemma", 256, 4, 4, 1, 768, 2048, 10000f, true, "tiny-gpt2", 128);

    /**
     * A Gemma 2 shape at llama-tiny's width: four layers alternating sliding-window (window 8) and
     * global, heads of 128, a norm on each branch's output, GELU, soft caps on attention scores
     * (0.3) and logits (2), tied embeddings.
     */
    public static final SynthPreset GEMMA2_TINY =
            new SynthPreset("gemma2-tiny", "gemma2", 256, 4, 4, 2, 768, 2048, 10000f, true, "tiny-gpt2", 128);

    /**
     * A Gemma 3 shape at llama-tiny's width: six layers, so five sliding-window layers (window 8,
     * shorter than the test prompts) and one global, heads of 128, per-head Q/K norms, a norm on each
     * branch's output, GELU, tied embeddings.
     */
    public static final SynthPreset GEMMA3_TINY =
            new SynthPreset("gemma3-tiny", "gemma3", 256, 6, 4, 2, 768, 2048, 1000000f, true, "tiny-gpt2", 128);

    /**
     * The LayerNorm lineage at llama-tiny's width, two layers, every norm with a bias:
     * {@code stablelm-tiny} (Q/K/V biases, SwiGLU, a quarter of each head rotated),
     * {@code starcoder2-tiny} (biases on every projection, ungated GELU FFN, tied embeddings),
     * {@code gptneox-tiny} (StarCoder2's blocks with a fused {@code attn_qkv} and its bias, attention
     * and FFN side by side each behind its own norm, a quarter of each head rotated),
     * {@code gpt2-tiny} (a fused {@code attn_qkv}, learned positions for 1024 tokens, no rotation) and
     * {@code phi2-tiny} (one fused {@code attn_qkv} with its bias, attention and FFN side by side,
     * half of each head rotated, an output bias).
     */
    public static final SynthPreset STABLELM_TINY =
            new SynthPreset("stablelm-tiny", "stablelm", 256, 2, 4, 4, 768, 2048, 10000f, false, "tiny-gpt2");
    public static final SynthPreset STARCODER2_TINY =
            new SynthPreset("starcoder2-tiny", "starcoder2", 256, 2, 4, 2, 1024, 2048, 100000f, true, "tiny-gpt2");
    public static final SynthPreset GPTNEOX_TINY =
            new SynthPreset("gptneox-tiny", "gptneox", 256, 2, 4, 4, 1024, 2048, 10000f, false, "tiny-gpt2");
    public static final SynthPreset GPT2_TINY =
            new SynthPreset("gpt2-tiny", "gpt2", 256, 2, 4, 4, 1024, 1024, 10000f, true, "tiny-gpt2");
    /** Command R's blocks at llama-tiny's width: LayerNorm without biases, parallel branches, logits × 0.5, tied embeddings. */
    public static final SynthPreset COMMAND_R_TINY =
            new SynthPreset("command-r-tiny", "command-r", 256, 2, 4, 2, 768, 2048, 10000f, true, "tiny-gpt2");
    /** Command R7B's graph ({@code cohere2}) at command-r-tiny's width, four layers: three with a window of 8, the fourth global and unrotated. */
    public static final SynthPreset COHERE2_TINY =
            new SynthPreset("cohere2-tiny", "cohere2", 256, 4, 4, 2, 768, 2048, 10000f, true, "tiny-gpt2");
    /**
     * stablelm-tiny and command-r-tiny with a LayerNorm over each head of Q and K, each head its own
     * weights ({@code attn_q_norm}/{@code attn_k_norm}, one row per head): StableLM 2 12B, Command R+
     * (64 narrow layers: llama.cpp reads Command R's Q/K norms only at Command R+'s depth).
     */
    public static final SynthPreset STABLELM_QK_TINY =
            new SynthPreset("stablelm-qk-tiny", "stablelm", 256, 2, 4, 4, 768, 2048, 10000f, false, "tiny-gpt2");
    public static final SynthPreset COMMAND_R_QK_TINY =
            new SynthPreset("command-r-qk-tiny", "command-r", 64, 64, 2, 2, 128, 2048, 10000f, true, "tiny-gpt2");
    public static final SynthPreset PHI2_TINY =
            new SynthPreset("phi2-tiny", "phi2", 256, 2, 4, 4, 1024, 2048, 10000f, false, "tiny-gpt2");

    /**
     * llama-tiny's shape with Mixtral's FFN: eight experts of width 256 in every layer, two used per
     * token, under the {@code llama} name as llama.cpp runs Mixtral; its own output head.
     */
    public static final SynthPreset MIXTRAL_TINY = new SynthPreset("mixtral-tiny", "llama", 256, 2, 4, 2, 256, 2048,
            1000000f, false, "tiny-gpt2", 64, new Experts(8, 2, 256));

    /**
     * Qwen3's attention (per-head Q/K norms, heads of 128, NeoX pairs) with Qwen3-MoE's FFN: sixteen
     * experts of width 256, four used per token; tied embeddings.
     */
    /**
     * A Qwen2-MoE shape at llama-tiny's width: Q/K/V biases, NeoX pairs, eight experts of width 256
     * with two used per token, renormalised not, plus a shared expert of width 512 behind a sigmoid
     * gate; its own output head, as qwen2moe files have.
     */
    public static final SynthPreset QWEN2MOE_TINY = new SynthPreset("qwen2moe-tiny", "qwen2moe", 256, 2, 4, 2, 768, 2048,
            1000000f, false, "tiny-gpt2", 64, new Experts(8, 2, 256, 512));

    /**
     * An OLMoE shape at llama-tiny's width: whole-Q/K norms, four K/V heads (OLMoE has no grouped
     * queries), eight experts of width 256 with two used per token, not renormalised; its own
     * output head.
     */
    public static final SynthPreset OLMOE_TINY = new SynthPreset("olmoe-tiny", "olmoe", 256, 2, 4, 4, 256, 2048, 10000f,
            false, "tiny-gpt2", 64, new Experts(8, 2, 256));

    /**
     * granite-tiny's multipliers with Granite MoE Shared's FFN (under {@code granitemoe}, as llama.cpp
     * names both): eight experts as wide as {@code feed_forward_length} (256), two per token,
     * renormalised, and an ungated shared expert of width 512; tied embeddings.
     */
    public static final SynthPreset GRANITEMOE_TINY = new SynthPreset("granitemoe-tiny", "granitemoe", 256, 2,
            4, 2, 256, 2048, 10000f, true, "tiny-gpt2", 64, new Experts(8, 2, 256, 512));

    public static final SynthPreset QWEN3MOE_TINY = new SynthPreset("qwen3moe-tiny", "qwen3moe", 256, 2, 4, 2, 768, 2048,
            1000000f, true, "tiny-gpt2", 128, new Experts(16, 4, 256));

    /**
     * A benchmark shape with Qwen3-30B-A3B's proportions at a tenth of its size: 16 layers of width
     * 1024, heads of 128 (16 query, 4 K/V), 64 experts of width 512 with 8 used per token (1.6 B
     * expert parameters, 0.2 B of them active per token), Llama-3's vocabulary, tied embeddings.
     */
    public static final SynthPreset QWEN3MOE_SMALL = new SynthPreset("qwen3moe-small", "qwen3moe", 1024, 16, 16, 4, 3072, 4096,
            1000000f, true, "llama-bpe", 128, new Experts(64, 8, 512));

    /**
     * llama-tiny's shape as a Granite 3 model: the llama graph with its four multipliers
     * (embeddings ×1.5, residual branches ×4, attention scores ×0.5, logits ÷0.5), tied embeddings.
     */
    public static final SynthPreset GRANITE_TINY =
            new SynthPreset("granite-tiny", "granite", 256, 2, 4, 2, 768, 2048, 10000f, true, "tiny-gpt2");

    /**
     * llama-tiny's shape as a MiniCPM model: the llama graph with Granite's multipliers under
     * {@code minicpm.} keys (embeddings ×1.5, residual branches ×4, logits ÷0.5), tied embeddings.
     */
    public static final SynthPreset MINICPM_TINY =
            new SynthPreset("minicpm-tiny", "minicpm", 256, 2, 4, 2, 768, 2048, 10000f, true, "tiny-gpt2");

    /**
     * A DeepSeek-V3 shape at llama-tiny's width ({@code deepseek2}): latent attention (query rank
     * 128, latent 128, heads of 64 unrotated + 32 rotated query/key values and 64 values, one K/V
     * head), a dense first layer of width 512, then eight experts of width 128 with two per token
     * chosen by sigmoid scores plus a choice bias, renormalised and ×2.5, and one shared expert.
     */
    public static final SynthPreset DEEPSEEK2_TINY = new SynthPreset("deepseek2-tiny", "deepseek2", 256, 3, 4, 1, 512, 2048,
            10000f, false, "tiny-gpt2", 64, new Experts(8, 2, 128, 128));

    /**
     * deepseek2-tiny in the layout llama.cpp wrote before it stored MLA's absorbed matrices: one
     * {@code attn_kv_b} per layer (each head's K rows, then its V rows), the heads' widths under
     * {@code key_length}/{@code value_length} and as many K/V heads as query heads.
     */
    public static final SynthPreset DEEPSEEK2_KVB_TINY = new SynthPreset("deepseek2-kvb-tiny", "deepseek2", 256, 3, 4, 4, 512, 2048,
            10000f, false, "tiny-gpt2", 64, new Experts(8, 2, 128, 128));

    /**
     * DeepSeek-V2-Lite's variant of deepseek2-tiny: no query rank (a plain {@code attn_q}; llama.cpp
     * tells Lite apart by its 27 layers, so there are 27), softmax routing without renormalising in
     * four expert groups of which two are searched, YaRN ×4 over 512 positions, eight experts of
     * width 64 and two shared ones.
     */
    public static final SynthPreset DEEPSEEK2_LITE_TINY = new SynthPreset("deepseek2-lite-tiny", "deepseek2", 256, 27, 4, 1, 512,
            2048, 10000f, false, "tiny-gpt2", 64, new Experts(8, 2, 64, 128));

    /**
     * A GLM-4.5 (Air) shape at llama-tiny's width ({@code glm4moe}): Q/K/V biases, NeoX pairs over
     * half of each head, the FFN's pre-norm stored as {@code post_attention_norm}, a dense first
     * layer of width 512, then eight experts of width 128 with two per token chosen by sigmoid
     * scores plus a choice bias, renormalised and ×2.5, and one shared expert; four blocks, the last
     * a NextN (multi-token prediction) layer that the main graph does not run.
     */
    public static final SynthPreset GLM4MOE_TINY = new SynthPreset("glm4moe-tiny", "glm4moe", 256, 4, 4, 2, 512, 2048,
            10000f, false, "tiny-gpt2", 64, new Experts(8, 2, 128, 128));

    /**
     * dots.llm1's graph at llama-tiny's width: Qwen3's per-head Q/K norms, a dense first layer,
     * then eight experts of 128 (two used, sigmoid with a choice bias, renormalised, ×2.5) and one shared.
     */
    public static final SynthPreset DOTS1_TINY = new SynthPreset("dots1-tiny", "dots1", 256, 2, 4, 4, 512, 2048,
            10000f, false, "tiny-gpt2", 64, new Experts(8, 2, 128, 128));

    /**
     * Hunyuan-A13B's graph at llama-tiny's width: per-head Q/K norms after the rotation, eight experts
     * of 256 (two used, softmax, renormalised) and a shared expert of 256 on every layer.
     */
    public static final SynthPreset HUNYUAN_MOE_TINY = new SynthPreset("hunyuan-moe-tiny", "hunyuan-moe", 256, 2, 4, 2, 256, 2048,
            10000f, false, "tiny-gpt2", 64, new Experts(8, 2, 256, 256));

    /** Ling's graph ({@code bailingmoe}) at llama-tiny's width: eight experts of 128 (three used, renormalised) and one shared on every layer. */
    public static final SynthPreset BAILINGMOE_TINY = new SynthPreset("bailingmoe-tiny", "bailingmoe", 256, 2, 4, 2, 512, 2048,
            10000f, false, "tiny-gpt2", 64, new Experts(8, 3, 128, 128));

    /** Hunyuan's dense graph ({@code hunyuan-dense}) at llama-tiny's shape: per-head Q/K norms after the rotation. */
    public static final SynthPreset HUNYUAN_DENSE_TINY =
            new SynthPreset("hunyuan-dense-tiny", "hunyuan-dense", 256, 2, 4, 2, 768, 2048, 10000f, false, "tiny-gpt2");

    /**
     * Mistral 3's graph ({@code mistral3}) at llama-tiny's shape, with a Q temperature of scale 0.5
     * over an original context of 16: positions 16–31 take 1 + 0.5·ln 2, 32–47 1 + 0.5·ln 3.
     */
    public static final SynthPreset MISTRAL3_TINY =
            new SynthPreset("mistral3-tiny", "mistral3", 256, 2, 4, 2, 768, 2048, 10000f, false, "tiny-gpt2");

    /** DeepSeek-MoE's graph ({@code deepseek}) at llama-tiny's width: a dense first layer, then eight experts of 128 (two used) and one shared. */
    public static final SynthPreset DEEPSEEK_TINY = new SynthPreset("deepseek-tiny", "deepseek", 256, 2, 4, 2, 512, 2048,
            10000f, false, "tiny-gpt2", 64, new Experts(8, 2, 128, 128));

    /** Nemotron's graph at llama-tiny's shape: LayerNorm with biases, half of each head rotated (NeoX), an ungated squared-ReLU FFN with biases. */
    public static final SynthPreset NEMOTRON_TINY =
            new SynthPreset("nemotron-tiny", "nemotron", 256, 2, 4, 2, 768, 2048, 10000f, false, "tiny-gpt2");

    /**
     * MiniMax-M2's graph at llama-tiny's width: whole-Q and whole-K norms, half of each head rotated,
     * eight experts of 256 (two used, sigmoid with a choice bias, renormalised) on every layer.
     */
    public static final SynthPreset MINIMAX_M2_TINY = new SynthPreset("minimax-m2-tiny", "minimax-m2", 256, 2, 4, 2, 256, 2048,
            10000f, false, "tiny-gpt2", 64, new Experts(8, 2, 256));

    /** glm4moe-tiny with GLM-4.5's (355B) per-head RMS norms on Q and K, which the Air model has not. */
    public static final SynthPreset GLM4MOE_QKNORM_TINY = new SynthPreset("glm4moe-qknorm-tiny", "glm4moe", 256, 4, 4, 2, 512, 2048,
            10000f, false, "tiny-gpt2", 64, new Experts(8, 2, 128, 128));

    /**
     * A gpt-oss shape at llama-tiny's width: Q/K/V and output biases, a sink logit per head, the
     * even layer attending to the last 8 positions, YaRN ×4 over 512, and eight experts of width
     * 128 with two per token, every projection and the router biased; its own output head.
     */
    public static final SynthPreset GPT_OSS_TINY = new SynthPreset("gpt-oss-tiny", "gpt-oss", 256, 2, 4, 2, 128, 2048, 150000f,
            false, "tiny-gpt2", 64, new Experts(8, 2, 128));

    /**
     * DeepSeek-V4 shapes. Only the name and architecture matter here: {@link Synth#write} hands them to
     * {@link Dsv4Synth}, whose {@link Dsv4Synth.Shape} holds the full V4 shape (these fields give
     * n_embd, main layers, heads, 1 latent KV head, the expert width and the vocabulary).
     */
    public static final SynthPreset DSV4_TINY = new SynthPreset("dsv4-tiny", "deepseek4", 256, 4, 4, 1, 128, 4096, 10000f, false, "tiny-gpt2");
    public static final SynthPreset DSV4_SMALL = new SynthPreset("dsv4-small", "deepseek4", 512, 8, 8, 1, 256, 4096, 10000f, false, "tiny-gpt2");

    public static final List<SynthPreset> ALL = List.of(LLAMA_TINY, LLAMA_110M, LLAMA_1B, EXAONE_TINY, ERNIE_TINY, XVERSE_TINY, INTERNLM2_TINY, SMOLLM2_TINY, SMOLLM3_TINY, EXAONE4_TINY, EXAONE4_SWA_TINY, GLM4_TINY, ARCEE_TINY, SEED_OSS_TINY, PHI3_TINY, PHIMOE_TINY, LLAMA4_TINY, ERNIE4_5_MOE_TINY, COHERE2_TINY, DOTS1_TINY, HUNYUAN_MOE_TINY, HUNYUAN_DENSE_TINY, BAILINGMOE_TINY, MISTRAL3_TINY, DEEPSEEK_TINY, NEMOTRON_TINY, MINIMAX_M2_TINY, QWEN2_TINY, QWEN3_TINY, GRANITE_TINY, MINICPM_TINY, OLMO2_TINY, OLMO3_TINY, GEMMA_TINY, GEMMA2_TINY, GEMMA3_TINY, STABLELM_TINY, STABLELM_QK_TINY, STARCODER2_TINY, GPTNEOX_TINY, GPT2_TINY, COMMAND_R_TINY, COMMAND_R_QK_TINY, PHI2_TINY, MIXTRAL_TINY, QWEN2MOE_TINY, OLMOE_TINY, GRANITEMOE_TINY, QWEN3MOE_TINY, QWEN3MOE_SMALL, GPT_OSS_TINY, GLM4MOE_TINY, GLM4MOE_QKNORM_TINY, DEEPSEEK2_TINY, DEEPSEEK2_KVB_TINY, DEEPSEEK2_LITE_TINY, DSV4_TINY, DSV4_SMALL);

    public static SynthPreset byName(String name) {
        for (SynthPreset p : ALL) if (p.name.equals(name.toLowerCase(Locale.ROOT))) return p;
        throw new IllegalArgumentException("unknown preset '" + name + "'; known: "
                + ALL.stream().map(SynthPreset::name).toList());
    }
}
