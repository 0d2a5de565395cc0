package dgr.gguf.synth;

import dgr.gguf.GgufWriter;
import dgr.gguf.MetaValue;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * What {@link Synth} writes for one architecture beyond the block shape the shared table
 * ({@link dgr.gguf.arch.Architectures}) gives: the tensors its files add (biases, fused
 * projections, sinks) and the metadata keys, with values sized for random weights, that make each
 * of its code paths move the logits. One line per architecture ({@link #ALL}); those not listed
 * are plain llama-shaped files ({@link #of}).
 *
 * @param name           the {@code general.architecture} value
 * @param ropeDivisor    {@code rope.dimension_count} is the head width over this (partial rotation: Phi-2 and GLM-4
 *                       rotate half of each head, StableLM and GPT-NeoX a quarter); 0: written with the latent keys
 * @param moeKeys        the routing keys written after the head counts
 * @param interleaveStep experts on every {@code interleaveStep}-th layer ({@code interleave_moe_layer_step}), dense
 *                       ones between; 0: the key is not written, experts on every layer
 * @param traits         the rest, one flag each
 */
record SynthArchitecture(String name, int ropeDivisor, MoeKeys moeKeys, int interleaveStep, Set<Trait> traits) {

    /** Llama 4's {@code interleave_moe_layer_step} in synthesized files: layers 1, 3, … run experts. */
    static final int LLAMA4_MOE_STEP = 2;

    enum Trait {
        /** {@code logit_scale} 0.5 right after the widths (Command R). */
        LOGIT_SCALE,
        /** {@code use_parallel_residual} (GPT-NeoX). */
        PARALLEL_RESIDUAL,
        /** Biases on Q, K and V (llama.cpp requires them for qwen2; StarCoder2 and StableLM 2 1.6B have them too). */
        QKV_BIAS,
        /** One {@code attn_qkv} projection instead of three. */
        FUSED_QKV,
        /** ... with its bias. */
        FUSED_QKV_BIAS,
        /** Gate and up projections as one {@code ffn_up} twice as wide. */
        FUSED_GATE_UP,
        /** A bias on the logits (Phi-2). */
        OUTPUT_BIAS,
        /** A bias after every RMS norm, on the attention output and on the logits, spread wider than the norms' weights so each moves the logits (Phi-3.5-MoE). */
        RMS_BIAS,
        /** LongRoPE: short and long per-pair factor tensors, their original context and a magnitude factor. */
        LONGROPE,
        /** Every layer alternates with a sliding window of 8. */
        SLIDING_WINDOW,
        /** Mistral 3's temperature, from an original context of 16 so that a short path crosses two of its steps. */
        TEMPERATURE_SCALE,
        /** Soft caps on scores and logits small enough to bend random weights' (Gemma 2's own are 50 and 30). */
        SOFT_CAPS,
        /** Granite's embedding, residual and logit multipliers. */
        MULTIPLIERS,
        /** ... and its attention multiplier (MiniCPM files have none). */
        ATTENTION_MULTIPLIER,
        /** Embeddings at a quarter of the spread: Gemma (1) scales them by sqrt(n_embd) and has no branch-output norms. */
        SCALED_EMBEDDINGS,
        /** The experts' width under {@code expert_feed_forward_length} (Mixtral, OLMoE and Granite read {@code feed_forward_length}). */
        EXPERT_FF_KEY,
        /** Layer 0 dense before the experts ({@code leading_dense_block_count} 1). */
        DENSE_LEAD,
        /** Shared experts counted ({@code expert_shared_count}), not given a width of their own. */
        COUNTED_SHARED,
        /** A choice bias ({@code exp_probs_b}) on each expert layer. */
        CHOICE_BIAS,
        /** The shared expert gated by one row ({@code ffn_gate_inp_shexp}, Qwen2-MoE). */
        SHARED_EXPERT_GATE,
        /** One NextN layer at the end of the blocks with its own tensors (llama.cpp loads them, the main graph skips it). */
        NEXTN,
        /** Latent attention (DeepSeek-V2/V3): low-rank query and joint latent key-value projections. */
        LATENT_ATTENTION,
        /** gpt-oss: biases on the attention output, sinks, sliding-window layers, YaRN, biased experts. */
        SINKS_AND_BIASED_EXPERTS
    }

    /** The routing and expert-shape keys an architecture writes after its head counts. */
    enum MoeKeys {
        /** None; the head width as key and value length where it is not {@code n_embd / n_head}. */
        PLAIN,
        /** DeepSeek-V2/V3's latent attention keys, dense lead, shared experts and routing ({@link Synth#putLatentKeys}). */
        LATENT,
        /** Ling's keys (llama.cpp requires them): no dense lead, one shared expert, renormalised, scale 1. */
        LING,
        /** DeepSeek-MoE: a dense first layer, one shared expert, the routing weights ×2.5. */
        DEEPSEEK,
        /**
         * MiniMax-M2's routing: sigmoid scores with a choice bias, renormalised, scale 1 (the
         * llama.cpp dgr is checked against ignores this key for minimax-m2, today's applies it).
         */
        MINIMAX,
        /** dots.llm1: DeepSeek-V3's routing and experts behind Qwen3's attention, a dense first layer. */
        DOTS1,
        /**
         * GLM-4.5's routing (sigmoid scores, a choice bias, renormalised, ×2.5), a dense first
         * layer, one shared expert, and one NextN layer at the end of the blocks.
         */
        GLM4MOE;

        void put(GgufWriter w, String a, SynthPreset p) {
            switch (this) {
                case PLAIN -> {
                    if (p.headDim() != p.nEmbd() / p.nHead()) {
                        w.put(a + ".attention.key_length", MetaValue.u32(p.headDim()));
                        w.put(a + ".attention.value_length", MetaValue.u32(p.headDim()));
                    }
                }
                case LATENT -> Synth.putLatentKeys(w, a, p);
                case LING -> {
                    w.put(a + ".leading_dense_block_count", MetaValue.u32(0));
                    w.put(a + ".expert_feed_forward_length", MetaValue.u32(p.experts().ff()));
                    w.put(a + ".expert_shared_count", MetaValue.u32(p.experts().sharedFf() / p.experts().ff()));
                    w.put(a + ".expert_weights_scale", MetaValue.f32(1f));
                    w.put(a + ".expert_weights_norm", MetaValue.bool(true));
                }
                case DEEPSEEK -> {
                    putDenseLeadAndSharedExperts(w, a, p);
                    w.put(a + ".expert_weights_scale", MetaValue.f32(2.5f));
                }
                case MINIMAX -> {
                    w.put(a + ".expert_gating_func", MetaValue.u32(2));
                    w.put(a + ".expert_weights_scale", MetaValue.f32(1f));
                    w.put(a + ".expert_feed_forward_length", MetaValue.u32(p.experts().ff()));
                }
                case DOTS1 -> {
                    putDenseLeadAndSharedExperts(w, a, p);
                    putV3Routing(w, a);
                }
                case GLM4MOE -> {
                    putDenseLeadAndSharedExperts(w, a, p);
                    putV3Routing(w, a);
                    w.put(a + ".nextn_predict_layers", MetaValue.u32(1));
                }
            }
        }

        /** One dense first layer, then experts of the preset's width with {@code sharedFf / ff} shared ones. */
        static void putDenseLeadAndSharedExperts(GgufWriter w, String a, SynthPreset p) {
            w.put(a + ".leading_dense_block_count", MetaValue.u32(1));
            w.put(a + ".expert_feed_forward_length", MetaValue.u32(p.experts().ff()));
            w.put(a + ".expert_shared_count", MetaValue.u32(p.experts().sharedFf() / p.experts().ff()));
        }

        /** DeepSeek-V3's routing: sigmoid scores (with the choice bias the tensors add), renormalised, ×2.5. */
        static void putV3Routing(GgufWriter w, String a) {
            w.put(a + ".expert_weights_scale", MetaValue.f32(2.5f));
            w.put(a + ".expert_weights_norm", MetaValue.bool(true));
            w.put(a + ".expert_gating_func", MetaValue.u32(2));
        }
    }

    boolean has(Trait t) {
        return traits.contains(t);
    }

    private static SynthArchitecture arch(String name, Trait... traits) {
        return new SynthArchitecture(name, 1, MoeKeys.PLAIN, 0, set(traits));
    }

    private static SynthArchitecture arch(String name, int ropeDivisor, MoeKeys keys, int interleave, Trait... traits) {
        return new SynthArchitecture(name, ropeDivisor, keys, interleave, set(traits));
    }

    private static Set<Trait> set(Trait... traits) {
        return traits.length == 0 ? Set.of() : Set.copyOf(EnumSet.of(traits[0], traits));
    }

    static final List<SynthArchitecture> ALL = List.of(
            arch("command-r", Trait.LOGIT_SCALE),
            arch("cohere2", Trait.LOGIT_SCALE, Trait.SLIDING_WINDOW),
            arch("phi2", 2, MoeKeys.PLAIN, 0, Trait.FUSED_QKV, Trait.FUSED_QKV_BIAS, Trait.OUTPUT_BIAS),
            arch("glm4", 2, MoeKeys.PLAIN, 0, Trait.FUSED_QKV, Trait.FUSED_QKV_BIAS, Trait.FUSED_GATE_UP),
            arch("glm4moe", 2, MoeKeys.GLM4MOE, 0, Trait.QKV_BIAS, Trait.DENSE_LEAD, Trait.COUNTED_SHARED, Trait.CHOICE_BIAS,
                    Trait.NEXTN),
            arch("nemotron", 2, MoeKeys.PLAIN, 0),
            arch("minimax-m2", 2, MoeKeys.MINIMAX, 0, Trait.CHOICE_BIAS),
            arch("stablelm", 4, MoeKeys.PLAIN, 0, Trait.QKV_BIAS),
            arch("gptneox", 4, MoeKeys.PLAIN, 0, Trait.PARALLEL_RESIDUAL, Trait.FUSED_QKV, Trait.FUSED_QKV_BIAS),
            arch("gpt2", Trait.FUSED_QKV, Trait.FUSED_QKV_BIAS),
            arch("deepseek2", 0, MoeKeys.LATENT, 0, Trait.LATENT_ATTENTION, Trait.DENSE_LEAD, Trait.COUNTED_SHARED),
            arch("bailingmoe", 1, MoeKeys.LING, 0, Trait.COUNTED_SHARED),
            arch("deepseek", 1, MoeKeys.DEEPSEEK, 0, Trait.DENSE_LEAD, Trait.COUNTED_SHARED),
            arch("dots1", 1, MoeKeys.DOTS1, 0, Trait.DENSE_LEAD, Trait.COUNTED_SHARED, Trait.CHOICE_BIAS),
            arch("ernie4_5-moe", 1, MoeKeys.PLAIN, 1, Trait.EXPERT_FF_KEY, Trait.DENSE_LEAD, Trait.CHOICE_BIAS),
            arch("llama4", 1, MoeKeys.PLAIN, LLAMA4_MOE_STEP, Trait.EXPERT_FF_KEY),
            arch("qwen2", Trait.QKV_BIAS),
            arch("qwen2moe", Trait.QKV_BIAS, Trait.EXPERT_FF_KEY, Trait.SHARED_EXPERT_GATE),
            arch("qwen3moe", Trait.EXPERT_FF_KEY),
            arch("hunyuan-moe", Trait.EXPERT_FF_KEY),
            arch("starcoder2", Trait.QKV_BIAS),
            arch("seed_oss", Trait.QKV_BIAS),
            arch("gpt-oss", Trait.QKV_BIAS, Trait.SINKS_AND_BIASED_EXPERTS),
            arch("phi3", Trait.FUSED_QKV, Trait.FUSED_GATE_UP, Trait.LONGROPE),
            arch("phimoe", Trait.QKV_BIAS, Trait.RMS_BIAS, Trait.LONGROPE),
            arch("gemma", Trait.SCALED_EMBEDDINGS),
            arch("gemma2", Trait.SLIDING_WINDOW, Trait.SOFT_CAPS),
            arch("gemma3", Trait.SLIDING_WINDOW),
            arch("mistral3", Trait.TEMPERATURE_SCALE),
            arch("granite", Trait.MULTIPLIERS, Trait.ATTENTION_MULTIPLIER),
            arch("granitemoe", Trait.MULTIPLIERS, Trait.ATTENTION_MULTIPLIER),
            arch("minicpm", Trait.MULTIPLIERS));

    /** The line for {@code name}, or a plain llama-shaped one for an architecture not listed. */
    static SynthArchitecture of(String name) {
        for (SynthArchitecture s : ALL) if (s.name.equals(name)) return s;
        return arch(name);
    }
}
