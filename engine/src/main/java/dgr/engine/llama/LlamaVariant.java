package dgr.engine.llama;

import dgr.engine.llama.FfnShape.KeyUse;
import dgr.engine.llama.FfnShape.Routing;
import dgr.engine.llama.FfnShape.SharedExpert;
import dgr.engine.llama.LlamaConfig.Multipliers;
import dgr.engine.llama.LlamaConfig.SlidingWindow;
import dgr.engine.llama.LlamaConfig.Softcaps;
import dgr.gguf.GgufArtifact;
import dgr.gguf.Metadata;
import dgr.gguf.arch.Architecture;
import dgr.gguf.arch.Architectures;
import java.util.Arrays;
import java.util.stream.Collectors;

/**
 * Every {@code general.architecture} the llama engine runs, and what each changes in the llama
 * graph, as llama.cpp builds it: one place to read what Qwen3 or Gemma 2 does differently. The
 * engine ({@link LlamaEngine}), the tensor loader ({@link LlamaWeights}) and the rotation
 * ({@link RopeConfig}) ask the variant instead of comparing architecture names.
 */
public enum LlamaVariant {
    /** Llama 1–3, Mistral, TinyLlama, SmolLM 1–2, DeepSeek-R1-Distill-Llama; Mixtral (experts). */
    LLAMA(Architectures.LLAMA, FfnShape.DENSE_OR_EXPERTS),
    /**
     * Mistral Small 3.x, Magistral, Devstral, Ministral 3 ({@code mistral3}): llama's blocks (normal
     * pairs, dense or Mixtral's experts) with, where {@code attention.temperature_scale} is given,
     * every layer's Q scaled by a position temperature after the rotation (floor: the original
     * context), and YaRN's magnitude factor cancelled as llama.cpp cancels it.
     */
    MISTRAL3(Architectures.MISTRAL3, FfnShape.DENSE_OR_EXPERTS),
    /** Converters that name Mistral models: llama's tensors under {@code mistral.} keys. */
    MISTRAL(Architectures.MISTRAL, FfnShape.DENSE_OR_EXPERTS),
    /** EXAONE 3.x: the llama graph under {@code exaone.} keys, NeoX pairs. */
    EXAONE(Architectures.EXAONE),
    /** ERNIE 4.5 (dense): the llama graph under {@code ernie4_5.} keys. */
    ERNIE4_5(Architectures.ERNIE4_5),
    /**
     * ERNIE 4.5 MoE (21B-A3B, 300B-A47B): ERNIE 4.5's blocks with experts on every
     * {@code interleave_moe_layer_step}-th layer after {@code leading_dense_block_count} dense ones:
     * softmax scores plus the {@code exp_probs_b} bias to choose, the chosen probabilities
     * renormalised to weigh, and a shared expert where {@code expert_shared_feed_forward_length} is
     * above 0.
     */
    ERNIE4_5_MOE(Architectures.ERNIE4_5_MOE, new FfnShape(FfnShape.Kind.EXPERTS, true, SharedExpert.PLAIN,
            new Routing(0, 1, false, KeyUse.REQUIRED, true, false, KeyUse.OPTIONAL, false))),
    /** XVERSE: the llama graph under {@code xverse.} keys. */
    XVERSE(Architectures.XVERSE),
    /** InternLM2, InternLM2.5: the llama graph under {@code internlm2.} keys (the converter splits its fused wqkv). */
    INTERNLM2(Architectures.INTERNLM2),
    /**
     * EXAONE 4.0: no pre-norms, each head of Q and K RMS-normalised, a norm on each branch's output
     * (OLMo 2's layout with per-head Q/K norms), NeoX pairs. With 64 layers (the 32B) llama.cpp
     * makes three of four layers sliding-window ({@code attention.sliding_window}, 4096 by
     * default) and leaves the fourth, global, unrotated; other depths attend globally and rotate
     * everywhere.
     */
    EXAONE4(Architectures.EXAONE4) {
        @Override
        SlidingWindow slidingWindow(GgufArtifact a, Metadata md, String p, RopeConfig rope) {
            if (md.getInt(p + "block_count") != 64) return null;
            return new SlidingWindow(md.getInt(p + "attention.sliding_window", 4096), 4, rope);
        }

        @Override
        boolean rotatesGlobalLayers() {
            return false;
        }
    },
    /**
     * GLM-4 (0414), GLM-Z1: RMS norms before and after each branch (Gemma 2's placement), Q/K/V in
     * one {@code attn_qkv} with its bias (or three tensors), gate and up in one {@code ffn_up} as
     * Phi-3's, normal pairs over part of each head ({@code rope.dimension_count}).
     */
    GLM4(Architectures.GLM4),
    /** Arcee (AFM-4.5B): llama with an ungated FFN, {@code down(relu(up·x)²)}. */
    ARCEE(Architectures.ARCEE),
    /**
     * Seed-OSS: the llama graph with Q/K/V biases and NeoX pairs, its FFN's pre-norm stored as
     * {@code post_attention_norm}.
     */
    SEED_OSS(Architectures.SEED_OSS),
    /**
     * gpt-oss: Q/K/V and output biases, NeoX pairs, one learned sink logit per head in every
     * softmax ({@code attn_sinks}), every other layer (the even ones) attending to the last
     * {@code attention.sliding_window} positions with the same rotation as the others, the FFN's
     * pre-norm stored as {@code post_attention_norm}, and experts only: the router (with its bias)
     * picks the highest scores and weighs them by their softmax, each expert's gate, up and down
     * have biases, and the activation is OpenAI's clamped SwiGLU.
     */
    GPT_OSS(Architectures.GPT_OSS, new FfnShape(FfnShape.Kind.EXPERTS, false, SharedExpert.NONE,
            new Routing(3, 1, false, KeyUse.NONE, false, false, KeyUse.NONE, false))) {
        @Override
        SlidingWindow slidingWindow(GgufArtifact a, Metadata md, String p, RopeConfig rope) {
            return new SlidingWindow(md.getInt(p + "attention.sliding_window"), 2, rope);
        }
    },
    /** SmolLM3: llama without rotation on every fourth layer (a constant in llama.cpp, no GGUF key). */
    SMOLLM3(Architectures.SMOLLM3),
    /** Qwen2, Qwen2.5, DeepSeek-R1-Distill-Qwen: Q/K/V biases (read wherever a file has them), NeoX pairs. */
    QWEN2(Architectures.QWEN2),
    /** Qwen3 (dense): each head of Q and K RMS-normalised before the rotation, no biases. */
    QWEN3(Architectures.QWEN3),
    /**
     * Qwen1.5-MoE, Qwen2-MoE: Qwen2's attention (biases, NeoX pairs); routed experts whose weights
     * are not renormalised, plus a shared expert every token runs, scaled by a sigmoid gate.
     */
    QWEN2MOE(Architectures.QWEN2MOE, new FfnShape(FfnShape.Kind.EXPERTS, false, SharedExpert.GATED)),
    /**
     * OLMoE: pre-norms as llama, all of Q and all of K normalised (OLMo 2's norms, no post-norms),
     * NeoX pairs, experts as wide as {@code feed_forward_length} whose weights are not
     * renormalised.
     */
    OLMOE(Architectures.OLMOE, new FfnShape(FfnShape.Kind.EXPERTS, false, SharedExpert.NONE)),
    /**
     * dots.llm1 ({@code dots1}): Qwen3's attention (per-head Q/K norms before NeoX pairs) with
     * DeepSeek-V3's FFN: dense leading layers, then experts chosen by the file's gating (sigmoid)
     * plus the {@code exp_probs_b} bias, renormalised where it says, scaled, with shared experts.
     */
    DOTS1(Architectures.DOTS1, new FfnShape(FfnShape.Kind.EXPERTS, false, SharedExpert.COUNTED, Routing.V3)),
    /**
     * Hunyuan-A13B ({@code hunyuan-moe}): NeoX pairs, each head of Q and K RMS-normalised after the
     * rotation (Qwen3 normalises before it), and every FFN experts (softmax, renormalised, scaled
     * where the file says) plus an ungated shared expert as wide as
     * {@code expert_shared_feed_forward_length} or {@code feed_forward_length}.
     */
    HUNYUAN_MOE(Architectures.HUNYUAN_MOE, new FfnShape(FfnShape.Kind.EXPERTS, true, SharedExpert.ALWAYS)) {
        @Override
        boolean qkNormAfterRope() {
            return true;
        }
    },
    /**
     * Ling / Ling-Plus ({@code bailingmoe}): llama's attention (normal pairs), experts on every layer
     * (llama.cpp reads {@code leading_dense_block_count} but loads experts everywhere): softmax,
     * renormalised where {@code expert_weights_norm} says, × {@code expert_weights_scale}, plus
     * {@code expert_shared_count} shared experts in one ungated FFN.
     */
    BAILINGMOE(Architectures.BAILINGMOE, new FfnShape(FfnShape.Kind.EXPERTS, false, SharedExpert.COUNTED,
            new Routing(0, 1, false, KeyUse.NONE, false, true, KeyUse.NONE, false))),
    /** Hunyuan dense (Hunyuan-0.5B … 7B, {@code hunyuan-dense}): Hunyuan-A13B's attention (Q/K norms after the rotation) with a dense FFN. */
    HUNYUAN_DENSE(Architectures.HUNYUAN_DENSE) {
        @Override
        boolean qkNormAfterRope() {
            return true;
        }
    },
    /**
     * DeepSeek-MoE 16B, DeepSeek LLM ({@code deepseek}): llama's attention (normal pairs) with
     * {@code leading_dense_block_count} dense layers, then experts (softmax, not renormalised,
     * × {@code expert_weights_scale}) and {@code expert_shared_count} shared experts in one ungated FFN.
     */
    DEEPSEEK(Architectures.DEEPSEEK, new FfnShape(FfnShape.Kind.DENSE_OR_EXPERTS, false, SharedExpert.COUNTED,
            new Routing(0, 1, false, KeyUse.OPTIONAL, false, false, KeyUse.NONE, false))),
    /**
     * MiniMax-M2: all of Q and all of K RMS-normalised (OLMo 2's norms), NeoX pairs over
     * {@code rope.dimension_count} of each head, experts on every layer chosen by the file's gating
     * (sigmoid) plus the {@code exp_probs_b} bias, renormalised, × {@code expert_weights_scale}
     * (as llama.cpp applies it today; the build dgr is checked against, v0.4.0, ignores it).
     */
    MINIMAX_M2(Architectures.MINIMAX_M2, new FfnShape(FfnShape.Kind.EXPERTS, true, SharedExpert.NONE,
            new Routing(0, 1, true, KeyUse.NONE, false, false, KeyUse.REQUIRED, false))),
    /** Qwen3-MoE: Qwen3's attention, every FFN a mixture of experts ({@link LlamaConfig.Experts}). */
    QWEN3MOE(Architectures.QWEN3MOE, FfnShape.EXPERTS),
    /**
     * Llama 4 (Scout, Maverick): llama's blocks with every fourth layer unrotated (and its Q scaled
     * by a position temperature), the other three attending within 8192-position chunks and their
     * Q/K heads RMS-normalised after the rotation ({@link LlamaConfig.PositionTuning}); experts on every
     * {@code interleave_moe_layer_step}-th layer: each score's sigmoid, the top
     * {@code expert_used_count}, the weight applied to the expert's input, plus a shared expert as
     * wide as the experts; dense layers elsewhere.
     */
    LLAMA4(Architectures.LLAMA4, new FfnShape(FfnShape.Kind.DENSE_OR_EXPERTS, false, SharedExpert.EXPERT_WIDE,
                    new Routing(2, 1, true, KeyUse.NONE, true, false, KeyUse.NONE, true))) {
        @Override
        SlidingWindow slidingWindow(GgufArtifact a, Metadata md, String p, RopeConfig rope) {
            if (md.has(p + "attention.sliding_window") && md.getInt(p + "attention.sliding_window") == 0) return null;
            return new SlidingWindow(8192, 4, rope, true);
        }
    },
    /** Phi-3, Phi-3.5, Phi-4-mini: fused attn_qkv and gate+up (split by {@link LlamaWeights}), LongRoPE factors. */
    PHI3(Architectures.PHI3),
    /**
     * Phi-3.5-MoE: Phi-3's graph (NeoX pairs, LongRoPE factors) with a bias after every RMS norm
     * (both branches' and the output's), Q/K/V, attention-output and logit biases, and every FFN
     * a mixture of experts: softmax over the router's scores, the top {@code expert_used_count},
     * their weights renormalised (Mixtral's routing).
     */
    PHIMOE(Architectures.PHIMOE, FfnShape.EXPERTS) {
        @Override
        boolean rmsNormBiases() {
            return true;
        }
    },
    /**
     * OLMo 2: no pre-norms, all of Q and all of K normalised, a norm on each branch's output. OLMo 3
     * is the same graph with {@code attention.sliding_window}: three window layers to one global
     * ({@code attention.sliding_window_pattern}, 4 by default), the window layers rotating without
     * the file's scaling (llama.cpp: freq_scale 1, no YaRN, attention factor 1) at
     * {@code rope.freq_base_swa} or the file's base.
     */
    OLMO2(Architectures.OLMO2) {
        @Override
        SlidingWindow slidingWindow(GgufArtifact a, Metadata md, String p, RopeConfig rope) {
            int window = md.getInt(p + "attention.sliding_window", 0);
            if (window <= 0) return null;
            int pattern = md.getInt(p + "attention.sliding_window_pattern", 4);
            if (pattern < 2) {
                throw new IllegalArgumentException(a.path() + ": " + p + "attention.sliding_window_pattern = " + pattern
                        + ": a pattern must have a global layer after at least one window layer");
            }
            double base = md.has(p + "rope.freq_base_swa") ? md.getDouble(p + "rope.freq_base_swa") : rope.freqBase();
            return new SlidingWindow(window, pattern, rope.unscaled(base));
        }
    },
    /**
     * Granite 3.x MoE: Granite's multipliers, experts renormalised, and where
     * {@code expert_shared_feed_forward_length} is above 0 a shared expert with no gate (Granite MoE
     * Shared, the same architecture name in llama.cpp).
     */
    GRANITEMOE(Architectures.GRANITEMOE, new FfnShape(FfnShape.Kind.EXPERTS, true, SharedExpert.PLAIN)) {
        @Override
        Multipliers multipliers(Metadata md, String p, int nLayers, int nEmbd, int nHead, int headDim) {
            return Multipliers.from(md, p);
        }
    },
    /** Granite 3.x (dense): the file's four multipliers on embeddings, residual branches, scores and logits. */
    GRANITE(Architectures.GRANITE) {
        @Override
        Multipliers multipliers(Metadata md, String p, int nLayers, int nEmbd, int nHead, int headDim) {
            return Multipliers.from(md, p);
        }
    },
    /**
     * MiniCPM (1, 2): the llama graph with Granite's multipliers under {@code minicpm.} keys
     * ({@code embedding_scale} = scale_emb, {@code residual_scale} = scale_depth/sqrt(n_layer),
     * {@code logit_scale} = n_embd/dim_model_base, which the logits are divided by); tied
     * embeddings.
     */
    MINICPM(Architectures.MINICPM) {
        @Override
        Multipliers multipliers(Metadata md, String p, int nLayers, int nEmbd, int nHead, int headDim) {
            return Multipliers.from(md, p);
        }
    },
    /**
     * DeepSeek-V2, V2.5, V3, R1, Kimi K2 and the other {@code deepseek2} files: multi-head latent
     * attention ({@link LlamaConfig.Mla}) with normal pairs on each head's rotated part; the first
     * {@code leading_dense_block_count} layers dense, the others experts routed by softmax (V2) or
     * sigmoid (V3, with {@code exp_probs_b} added for the choice only), optionally within the best
     * {@code expert_group_used_count} of {@code expert_group_count} groups, renormalised where
     * {@code expert_weights_norm}, times {@code expert_weights_scale}; plus {@code expert_shared_count}
     * shared experts in one ungated FFN. Scores are scaled by {@code 1/sqrt(key_length_mla)}, times
     * YaRN's {@code mscale²} where the rotation is YaRN-scaled.
     */
    DEEPSEEK2(Architectures.DEEPSEEK2, new FfnShape(FfnShape.Kind.EXPERTS, false, SharedExpert.COUNTED, Routing.V3)) {
        @Override
        Multipliers multipliers(Metadata md, String p, int nLayers, int nEmbd, int nHead, int headDim) {
            // Since llama.cpp's MLA layout the heads' width is key_length_mla; before it, key_length.
            int kMla = md.getInt(p + "attention.key_length_mla", md.getInt(p + "attention.key_length", headDim));
            double mscale = 1;
            if (md.getString(p + "rope.scaling.type", "none").equalsIgnoreCase("yarn")) {
                // The file's yarn_log_multiplier is 0.1·mscale_all_dim, so this is HF's yarn_get_mscale(factor, mscale_all_dim).
                double factor = md.has(p + "rope.scaling.factor") ? md.getDouble(p + "rope.scaling.factor") : 1.0;
                double attn = md.has(p + "rope.scaling.attn_factor") ? md.getDouble(p + "rope.scaling.attn_factor") : 1.0;
                mscale = attn * (1 + md.getFloat(p + "rope.scaling.yarn_log_multiplier", 0f) * Math.log(factor));
            }
            return new Multipliers(1f, 1f, (float) (mscale * mscale / Math.sqrt(kMla)), 1f);
        }
    },
    /**
     * GLM-4.5, GLM-4.5-Air ({@code glm4moe}): Q/K/V biases, per-head Q/K RMS norms where a file has
     * them (the 355B), NeoX pairs over {@code rope.dimension_count} of each head, the FFN's pre-norm
     * stored as {@code post_attention_norm}; the first {@code leading_dense_block_count} layers
     * dense, the others experts routed as DeepSeek-V3's (sigmoid scores, {@code exp_probs_b} for the
     * choice, renormalised where {@code expert_weights_norm}, times {@code expert_weights_scale}) plus
     * {@code expert_shared_count} shared experts; the last {@code nextn_predict_layers} blocks are
     * multi-token-prediction layers the main graph does not run (as llama.cpp).
     */
    GLM4MOE(Architectures.GLM4MOE, new FfnShape(FfnShape.Kind.EXPERTS, false, SharedExpert.COUNTED,
            Routing.V3.withDefaultGating(2).withChoiceBias(KeyUse.REQUIRED))),
    /**
     * Gemma (1), CodeGemma: embeddings × sqrt(n_embd), queries × 1/sqrt(head_dim), NeoX pairs,
     * GELU; no branch-output norms, windows or soft caps.
     */
    GEMMA(Architectures.GEMMA) {
        @Override
        Multipliers multipliers(Metadata md, String p, int nLayers, int nEmbd, int nHead, int headDim) {
            return gemmaMultipliers(false, nEmbd, nHead, headDim);
        }
    },
    /**
     * Gemma 2: embeddings × sqrt(n_embd), branch-output norms, GELU, local and global layers
     * alternating at one base, soft caps on scores and logits (defaults as in llama.cpp).
     */
    GEMMA2(Architectures.GEMMA2) {
        @Override
        Multipliers multipliers(Metadata md, String p, int nLayers, int nEmbd, int nHead, int headDim) {
            return gemmaMultipliers(nLayers == 46, nEmbd, nHead, headDim);
        }

        @Override
        SlidingWindow slidingWindow(GgufArtifact a, Metadata md, String p, RopeConfig rope) {
            return new SlidingWindow(md.getInt(p + "attention.sliding_window", 4096), 2, rope);
        }

        @Override
        Softcaps softcaps(Metadata md, String p) {
            return new Softcaps(md.getFloat(p + "attn_logit_softcapping", 50f), md.getFloat(p + "final_logit_softcapping", 30f));
        }
    },
    /**
     * Gemma 3 (text): Gemma 2's scales, norms and GELU plus per-head Q/K norms, five local layers
     * (base 10⁴, unscaled) to one global, no soft caps.
     */
    GEMMA3(Architectures.GEMMA3) {
        @Override
        Multipliers multipliers(Metadata md, String p, int nLayers, int nEmbd, int nHead, int headDim) {
            return gemmaMultipliers(nLayers == 62, nEmbd, nHead, headDim);
        }

        @Override
        SlidingWindow slidingWindow(GgufArtifact a, Metadata md, String p, RopeConfig rope) {
            return new SlidingWindow(md.getInt(p + "attention.sliding_window"), 6, rope.unscaled(10000.0));
        }
    },
    /**
     * StableLM 2 (1.6B, 3B): LayerNorm blocks ({@link Architecture.LayerNorm}), Q/K/V biases where the
     * file has them, no output-projection bias, SwiGLU, NeoX pairs over the file's
     * {@code rope.dimension_count} (a quarter of each head).
     */
    STABLELM(Architectures.STABLELM),
    /**
     * StarCoder2: LayerNorm blocks with biases on every projection, an ungated GELU FFN
     * ({@code ffn_up}, {@code ffn_down} and their biases), NeoX pairs, tied or separate head.
     */
    STARCODER2(Architectures.STARCODER2),
    /**
     * GPT-NeoX, Pythia: StarCoder2's blocks with Q, K and V in one {@code attn_qkv} (and its bias),
     * a rotated fraction of each head, and, where {@code use_parallel_residual} is true (its
     * default), attention and FFN side by side, each behind its own norm: {@code x + attn(ln1(x)) +
     * ffn(ln2(x))}.
     */
    GPTNEOX(Architectures.GPTNEOX) {
        @Override
        Parallel parallel(Metadata md, String p) {
            return md.getBool(p + "use_parallel_residual", true) ? Parallel.OWN_NORMS : Parallel.NONE;
        }
    },
    /**
     * GPT-2: StarCoder2's blocks with one {@code attn_qkv} and its bias, and no rotation at all: a
     * learned position embedding ({@code position_embd}, one row per position up to
     * {@code context_length}) is added to the token's.
     */
    GPT2(Architectures.GPT2),
    /**
     * Command R, Aya 23 / Expanse: LayerNorm without biases, attention and SwiGLU FFN side by side
     * from the one norm, Q/K/V biases where the file has them, normal pairs, tied embeddings, and
     * the logits multiplied by {@code logit_scale}.
     */
    COMMAND_R(Architectures.COMMAND_R) {
        @Override
        Multipliers multipliers(Metadata md, String p, int nLayers, int nEmbd, int nHead, int headDim) {
            // The engine divides by Multipliers.logit (Granite's convention); Command R multiplies.
            return new Multipliers(1f, 1f, 0f, 1f / Multipliers.logitScale(md, p));
        }
    },
    /**
     * Command R7B, Command A ({@code cohere2}): Command R's blocks (one LayerNorm without bias
     * feeding attention and FFN side by side, the logits times {@code logit_scale}) with three of
     * every four layers attending to the last {@code attention.sliding_window} positions and the
     * fourth global and unrotated.
     */
    COHERE2(Architectures.COHERE2) {
        @Override
        Multipliers multipliers(Metadata md, String p, int nLayers, int nEmbd, int nHead, int headDim) {
            return COMMAND_R.multipliers(md, p, nLayers, nEmbd, nHead, headDim);
        }

        @Override
        SlidingWindow slidingWindow(GgufArtifact a, Metadata md, String p, RopeConfig rope) {
            return new SlidingWindow(md.getInt(p + "attention.sliding_window"), 4, rope);
        }

        @Override
        boolean rotatesGlobalLayers() {
            return false;
        }
    },
    /**
     * Nemotron (Minitron, Nemotron-4 converted with the "1p" weights folded in): LayerNorm with
     * biases before each branch and the head, NeoX pairs over {@code rope.dimension_count} of each
     * head, Q/K/V and attention-output biases where present, and an ungated squared-ReLU FFN with
     * optional biases.
     */
    NEMOTRON(Architectures.NEMOTRON),
    /**
     * Phi-2: one LayerNorm per block feeding attention and the ungated GELU FFN side by side
     * ({@code x + (attn + ffn)}), Q/K/V in one {@code attn_qkv} with its bias, NeoX pairs over
     * part of each head, an output bias on the logits.
     */
    PHI2(Architectures.PHI2);

    /**
     * How a block's two branches join the residual: one after the other ({@code NONE}); side by
     * side from the one attention norm (Phi-2: {@code SHARED_NORM}, no {@code ffn_norm}); side by
     * side each from its own norm of the same input (GPT-NeoX: {@code OWN_NORMS}). Side by side,
     * {@code x + (attn + ffn)}.
     */
    public enum Parallel { NONE, SHARED_NORM, OWN_NORMS }

    /** The tensor holding the FFN's pre-norm, {@code blk.N.NAME.weight} ({@link Architecture#ffnNormTensor}). */
    String ffnNormTensor() {
        return facts.ffnNormTensor();
    }

    /** Whether the global layers of a sliding-window model rotate Q and K (all but EXAONE 4's do). */
    boolean rotatesGlobalLayers() {
        return true;
    }

    /** Whether the Q/K norms follow the rotation instead of preceding it (Hunyuan). */
    boolean qkNormAfterRope() {
        return false;
    }

    /** Whether each RMS norm adds a bias after its weight ({@code *_norm.bias}; Phi-3.5-MoE), with the attention output's and the logits'. */
    boolean rmsNormBiases() {
        return false;
    }

    /** Whether positions come from a learned {@code position_embd} table added to the embeddings (GPT-2) instead of rotation. */
    boolean learnedPositions() {
        return facts.learnedPositions();
    }

    /** This variant's {@link Parallel} for a file: one norm feeding both branches where the table says so. */
    Parallel parallel(Metadata md, String p) {
        return facts.oneNormBothBranches() ? Parallel.SHARED_NORM : Parallel.NONE;
    }

    /** The table's facts about this architecture's blocks (gguf's {@link Architectures}: synth writes by the same table). */
    final Architecture facts;
    private final String architecture;
    /** llama.cpp's rope type for the architecture: NeoX pairs {@code (i, i + n/2)}, else {@code (2i, 2i+1)}. */
    final boolean neox;
    final Architecture.QkNorm qkNorm;
    /** Whether each branch's input is RMS-normalised ({@code attn_norm}, {@code ffn_norm}). */
    final boolean preNorms;
    /** Whether each branch's output is ({@code post_attention_norm}, {@code post_ffw_norm}). */
    final boolean postNorms;
    /** GELU (tanh form) in the FFN instead of SiLU. */
    final boolean gelu;
    /** Every {@code noRopeStep}-th layer skips the rotation; 0 rotates all. */
    final int noRopeStep;
    /** The FFN its files have. */
    final FfnShape ffn;
    /** LayerNorm blocks (StableLM, StarCoder2, Phi-2), or null for RMSNorm ones. */
    final Architecture.LayerNorm layerNorm;

    /** An architecture of the table with its dense FFN: gated, or ungated where the table says so. */
    LlamaVariant(Architecture facts) {
        this(facts, facts.ungatedFfn() ? FfnShape.PLAIN : FfnShape.DENSE);
    }

    LlamaVariant(Architecture facts, FfnShape ffn) {
        this.facts = facts;
        this.architecture = facts.name();
        this.neox = facts.neox();
        this.qkNorm = facts.qkNorm();
        this.preNorms = facts.preNorms();
        this.postNorms = facts.postNorms();
        this.gelu = facts.gelu();
        this.noRopeStep = facts.noRopeStep();
        this.ffn = ffn;
        this.layerNorm = facts.layerNorm();
    }

    /** The {@code general.architecture} value. */
    public String architecture() {
        return architecture;
    }

    /** The variant for an architecture name, or null when the llama engine does not run it. */
    public static LlamaVariant of(String architecture) {
        for (LlamaVariant v : values()) if (v.architecture.equals(architecture)) return v;
        return null;
    }

    /** The architecture names, comma separated, for error messages. */
    public static String names() {
        return Arrays.stream(values()).map(LlamaVariant::architecture).collect(Collectors.joining(", "));
    }

    Multipliers multipliers(Metadata md, String p, int nLayers, int nEmbd, int nHead, int headDim) {
        return Multipliers.NONE;
    }

    SlidingWindow slidingWindow(GgufArtifact a, Metadata md, String p, RopeConfig rope) {
        return null;
    }

    Softcaps softcaps(Metadata md, String p) {
        return Softcaps.NONE;
    }


    /**
     * Gemma's, as llama.cpp loads them: embeddings × sqrt(n_embd) and queries × 1/sqrt(head_dim),
     * or 1/sqrt(n_embd/n_head) for the 27B.
     */
    private static Multipliers gemmaMultipliers(boolean big, int nEmbd, int nHead, int headDim) {
        float att = (float) (1.0 / Math.sqrt(big ? (double) nEmbd / nHead : headDim));
        return new Multipliers((float) Math.sqrt(nEmbd), 1f, att, 1f);
    }
}
