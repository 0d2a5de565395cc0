package dgr.engine.llama;

import dgr.gguf.GgufArtifact;
import dgr.gguf.Metadata;
import dgr.gguf.TensorInfo;

/**
 * Hyper-parameters of a llama-architecture model, read from GGUF metadata under the
 * architecture's prefix ({@code llama.*}).
 *
 * @param headDim      per-head width of Q, K and V ({@code key_length}, default n_embd / n_head)
 * @param parallel     how each block's branches join the residual ({@link LlamaVariant.Parallel})
 * @param rmsEps       the norms' epsilon: {@code layer_norm_rms_epsilon}, or {@code layer_norm_epsilon}
 *                     for the LayerNorm variants
 * @param trainContext the context the model was trained with ({@code context_length})
 */
public record LlamaConfig(LlamaVariant variant, int nEmbd, int nLayers, int nFf, int nHead, int nHeadKv, int headDim,
                          float rmsEps, int vocabSize, int trainContext, RopeConfig rope, Multipliers multipliers,
                          SlidingWindow slidingWindow, Softcaps softcaps, Experts experts, LlamaVariant.Parallel parallel,
                          Mla mla, PositionTuning tuning) {

    /**
     * Position-dependent attention tuning, as llama.cpp builds it. Llama 4: every {@code noRopeStep}-th
     * layer ({@code (il + 1) % step == 0}) keeps positions out of Q and K and scales Q by the
     * temperature {@code log(floor((pos + tempOffset) / tempFloor) + 1)·tempScale + 1} (0 scale:
     * none); the rotated layers, where {@code qkNorm}, RMS-normalise each head of Q and K after the
     * rotation, without weights (Llama4TextL2Norm). Mistral 3: every layer rotates and scales Q by
     * the temperature after the rotation ({@code everyLayer}). Null elsewhere (SmolLM3's unrotated
     * layers are the variant's {@code noRopeStep}).
     */
    public record PositionTuning(int noRopeStep, boolean qkNorm, float tempScale, int tempFloor, float tempOffset, boolean everyLayer) {
        /** Q's factor at position {@code pos}, as llama.cpp computes it (float position and quotient, the rest in double). */
        public float temperature(int pos) {
            if (tempScale == 0f) return 1f;
            return (float) (Math.log(Math.floor(((float) pos + tempOffset) / (float) tempFloor) + 1.0) * tempScale + 1.0);
        }
    }

    /**
     * DeepSeek-V2/V3's multi-head latent attention ({@code deepseek2}), run as llama.cpp runs it:
     * queries from a low-rank {@code attn_q_a} (rank {@code qLoraRank}, 0 where the file has a plain
     * {@code attn_q}), each head {@code nope + rope} wide; keys and values from one compressed
     * latent of {@code kvLoraRank} values plus a {@code rope}-wide rotated key shared by all heads.
     * The state keeps the latent and the rotated key ({@code kvLoraRank + rope} per token, one K/V
     * head: {@link LlamaConfig#headDim}); each head's {@code nope} part of the query is absorbed into
     * the latent through {@code attn_k_b}, and the attention output in the latent is lifted to the
     * head's {@code vHead} values through {@code attn_v_b}.
     */
    public record Mla(int qLoraRank, int kvLoraRank, int nope, int rope, int vHead) {
        /** The K/V state's width per token: the latent, then the rotated key. */
        public int stateDim() { return kvLoraRank + rope; }
    }

    /**
     * A mixture-of-experts FFN (Mixtral under {@code llama}, Qwen2-MoE, Qwen3-MoE): {@code count}
     * experts of width {@code ff}; a router scores them, the softmax's {@code used} highest are run,
     * their probabilities renormalised to sum 1 where {@code normWeights} (llama.cpp's {@code norm_w}:
     * Mixtral and Qwen3-MoE, not Qwen2-MoE), times {@code weightsScale} unless it is 0 or 1, and
     * their outputs summed in that order; plus, where {@code sharedFf > 0}, a shared expert of that
     * width, scaled by a sigmoid gate where {@code sharedGated} (Qwen2-MoE) and added as it is
     * otherwise (Granite MoE Shared). On layers {@link #at} picks ({@code leadingDense}, the
     * interleave {@code step}); with {@code weightBeforeFfn} (Llama 4) each choice's weight scales
     * the expert's input and the outputs are summed as they are. Null for a dense FFN.
     */
    public record Experts(int count, int used, int ff, float weightsScale, boolean normWeights, int sharedFf,
                          boolean sharedGated, Gating gating, int leadingDense, int groups, int groupsUsed, int step,
                          boolean weightBeforeFfn) {
        /**
         * How router scores become choices and weights ({@code expert_gating_func}): the softmax
         * of all scores (1), each score's sigmoid (2, DeepSeek-V3), or the highest raw scores with
         * the softmax of just those as weights (3, gpt-oss).
         */
        public enum Gating { SOFTMAX, SIGMOID, SOFTMAX_WEIGHT }

        /**
         * Whether model layer {@code layer} runs the experts: DeepSeek's first layers are dense, and
         * Llama 4 interleaves them, every {@code step}-th layer ({@code (layer + 1) % step == 0}; none for 0).
         */
        public boolean at(int layer) {
            return layer >= leadingDense && step > 0 && (layer + 1) % step == 0;
        }

        static Experts from(GgufArtifact a, Metadata md, String p, LlamaVariant v, int nFf) {
            int count = md.getInt(p + "expert_count", 0);
            if (count == 0) {
                if (v.ffn.kind() == FfnShape.Kind.EXPERTS) {
                    throw new IllegalArgumentException(a.path() + ": " + p + "expert_count is missing; " + v.architecture()
                            + " models route every token through experts");
                }
                return null;
            }
            if (v.ffn.kind() == FfnShape.Kind.DENSE || v.ffn.kind() == FfnShape.Kind.PLAIN) {
                throw new IllegalArgumentException(a.path() + ": " + p + "expert_count = " + count
                        + ": mixture-of-experts " + v.architecture() + " models are not supported by the llama engine");
            }
            int used = md.getInt(p + "expert_used_count", 0);
            if (count < 0 || used < 1 || used > count) {
                throw new IllegalArgumentException(a.path() + ": " + p + "expert_used_count = " + used
                        + " must be between 1 and " + p + "expert_count = " + count);
            }
            // 1: softmax; 2: sigmoid; 3 (gpt-oss): softmax over the chosen raw scores. Which the
            // architecture reads, allows or fixes, and its other keys, are its Routing.
            FfnShape.Routing rt = v.ffn.routing();
            int gating = rt.fixedGating() != 0 ? rt.fixedGating() : md.getInt(p + "expert_gating_func", rt.defaultGating());
            if (rt.fixedGating() == 0 && gating != 1 && !(rt.sigmoidAllowed() && gating == 2)) {
                throw new IllegalArgumentException(a.path() + ": " + p + "expert_gating_func = " + gating
                        + ": the llama engine routes with softmax (1)" + (rt.sigmoidAllowed() ? " or sigmoid (2)" : " only"));
            }
            int lead = switch (rt.leadingDense()) {
                case NONE -> 0;
                case OPTIONAL -> md.getInt(p + "leading_dense_block_count", 0);
                case REQUIRED -> md.getInt(p + "leading_dense_block_count");
            };
            int groups = md.getInt(p + "expert_group_count", 1), groupsUsed = md.getInt(p + "expert_group_used_count", groups);
            if (groups < 1 || count % groups != 0 || groupsUsed < 1 || groupsUsed > groups || groups > 64 || (groups > 1 && count / groups < 2)) {
                throw new IllegalArgumentException(a.path() + ": " + p + "expert_group_count = " + groups + ", "
                        + p + "expert_group_used_count = " + groupsUsed + " do not divide " + count + " experts into at most 64 groups of two or more");
            }
            // Mixtral's experts are feed_forward_length wide; Qwen3-MoE names their width on its own.
            int ff = md.getInt(p + "expert_feed_forward_length", nFf);
            float scale = md.getFloat(p + "expert_weights_scale", 0f);
            if (!Float.isFinite(scale) || scale < 0) {
                throw new IllegalArgumentException(a.path() + ": " + p + "expert_weights_scale = " + scale + " is not a usable factor");
            }
            // Qwen2-MoE's gated shared expert is feed_forward_length wide unless its own key says
            // otherwise; Granite's plain one is there only when that key is above 0.
            FfnShape.SharedExpert se = v.ffn.shared();
            int shared = switch (se) {
                case NONE -> 0;
                case GATED -> md.getInt(p + "expert_shared_feed_forward_length", nFf);
                case PLAIN -> md.getInt(p + "expert_shared_feed_forward_length", 0);
                case COUNTED -> md.getInt(p + "expert_shared_count", 0) * md.getInt(p + "expert_feed_forward_length", nFf);
                case EXPERT_WIDE -> ff;
                case ALWAYS -> md.getInt(p + "expert_shared_feed_forward_length", nFf);
            };
            if (se == FfnShape.SharedExpert.GATED && shared <= 0) {
                throw new IllegalArgumentException(a.path() + ": " + p + "expert_shared_feed_forward_length is missing; "
                        + v.architecture() + " models have a shared expert");
            }
            if (shared < 0) {
                throw new IllegalArgumentException(a.path() + ": " + p + "expert_shared_feed_forward_length = " + shared + " is negative");
            }
            boolean norm = rt.normFromKey() ? md.getBool(p + "expert_weights_norm", false) : v.ffn.normWeights();
            Gating g = gating == 2 ? Gating.SIGMOID : gating == 3 ? Gating.SOFTMAX_WEIGHT : Gating.SOFTMAX;
            int step = 1;
            if (rt.interleave()) {
                step = md.getInt(p + "interleave_moe_layer_step");
                if (step < 0) throw new IllegalArgumentException(a.path() + ": " + p + "interleave_moe_layer_step = " + step + " is negative");
            }
            return new Experts(count, used, ff, scale, norm, shared, se == FfnShape.SharedExpert.GATED, g, lead,
                    groups, groupsUsed, step, rt.weightBeforeFfn());
        }
    }

    /** The {@code general.architecture} value. */
    public String architecture() {
        return variant.architecture();
    }

    /**
     * Gemma 2's soft caps: attention scores become {@code tanh(s/attention)·attention} before the
     * softmax, logits {@code tanh(l/logits)·logits}; 0 leaves a value uncapped.
     */
    public record Softcaps(float attention, float logits) {
        public static final Softcaps NONE = new Softcaps(0f, 0f);

        /** {@code tanh(x/cap)·cap} in float steps, as ggml scales, takes tanh and scales back; x itself when cap is 0. */
        public static float apply(float x, float cap) {
            return cap == 0f ? x : (float) Math.tanh(x * (1f / cap)) * cap;
        }
    }

    /**
     * Whether layer {@code il} (counted over the whole model) rotates Q and K: SmolLM3 leaves out
     * every fourth layer ({@link LlamaVariant#noRopeStep}), EXAONE 4's sliding-window models their
     * global layers; the others rotate all.
     */
    public boolean ropeAt(int layer) {
        if (slidingWindow != null && !variant.rotatesGlobalLayers() && !slidingWindow.isLocal(layer)) return false;
        int step = tuning != null ? tuning.noRopeStep() : variant.noRopeStep;
        return step == 0 || (layer + 1) % step != 0;
    }

    /**
     * Gemma 3's local attention: layer {@code il} (counted over the whole model) attends only to the
     * last {@code window} positions, itself included, unless {@code il % pattern == pattern − 1};
     * local layers rotate with {@code localRope} (base 10000, unscaled), the others with the file's.
     */
    public record SlidingWindow(int window, int pattern, RopeConfig localRope, boolean chunked) {
        public SlidingWindow {
            if (window < 1) throw new IllegalArgumentException("sliding window must be at least 1, not " + window);
        }

        /** A sliding window: each position attends to the last {@code window} positions, its own included. */
        public SlidingWindow(int window, int pattern, RopeConfig localRope) {
            this(window, pattern, localRope, false);
        }

        /**
         * The first position a local layer's row at {@code pos} attends to: the window's start, or
         * with {@code chunked} (Llama 4) the start of its {@code window}-aligned chunk.
         */
        public int start(int pos) {
            return chunked ? pos - pos % window : Math.max(0, pos - window + 1);
        }

        public boolean isLocal(int layer) {
            return layer % pattern < pattern - 1;
        }
    }

    /** Whether layer {@code il} of the model is a sliding-window layer. */
    public boolean isLocal(int layer) {
        return slidingWindow != null && slidingWindow.isLocal(layer);
    }

    /**
     * Granite's four scalars (llama.cpp reads them for Granite and MiniCPM only): token embeddings
     * times {@code embedding}, each residual branch's output times {@code residual} before it is
     * added, attention scores times {@code attention} (0: the usual {@code 1/sqrt(head_dim)}), and
     * logits divided by {@code logit}. {@link #NONE} for every other architecture.
     */
    public record Multipliers(float embedding, float residual, float attention, float logit) {
        public static final Multipliers NONE = new Multipliers(1f, 1f, 0f, 1f);

        static Multipliers from(Metadata md, String p) {
            return new Multipliers(md.getFloat(p + "embedding_scale", 1f), md.getFloat(p + "residual_scale", 1f),
                    md.getFloat(p + "attention.scale", 0f), logitScale(md, p));
        }

        /** The file's {@code logit_scale} (1 without one), refused unless a positive finite number. */
        static float logitScale(Metadata md, String p) {
            float logit = md.getFloat(p + "logit_scale", 1f);
            if (!(logit > 0) || !Float.isFinite(logit)) throw new IllegalArgumentException(p + "logit_scale must be a positive number, not " + logit);
            return logit;
        }

        /** The factor on {@code q·k}: the file's, or {@code 1/sqrt(headDim)} when it gives none. */
        public float attentionScale(int headDim) {
            return attention != 0f ? attention : (float) (1.0 / Math.sqrt(headDim));
        }
    }

    public LlamaConfig {
        if (nHead % nHeadKv != 0) {
            throw new IllegalArgumentException("head_count " + nHead + " is not a multiple of head_count_kv " + nHeadKv);
        }
        if (headDim % 8 != 0) throw new IllegalArgumentException("head dimension " + headDim + " is not a multiple of 8");
    }

    public int qDim() { return nHead * headDim; }

    public int kvDim() { return nHeadKv * headDim; }

    public static LlamaConfig from(GgufArtifact a) {
        Metadata md = a.metadata();
        String arch = md.getString("general.architecture");
        String p = arch + ".";
        int nEmbd = md.getInt(p + "embedding_length");
        int nHead = md.getInt(p + "attention.head_count");
        int nHeadKv = md.getInt(p + "attention.head_count_kv", nHead);
        int headDim = md.getInt(p + "attention.key_length", nEmbd / nHead);
        int vLen = md.getInt(p + "attention.value_length", headDim);
        LlamaVariant v0 = LlamaVariant.of(arch);
        Mla mla = v0 == LlamaVariant.DEEPSEEK2 ? mla(a, md, p, headDim, vLen, nHead, nHeadKv) : null;
        if (mla != null) {
            // The state holds one latent head, whatever the file's layout says about K and V.
            headDim = mla.stateDim();
            nHeadKv = 1;
        }
        if (mla == null && vLen != headDim) {
            throw new IllegalArgumentException(a.path() + ": key_length " + headDim + " != value_length " + vLen
                    + " is not supported by the llama engine");
        }
        TensorInfo embd = a.tensor("token_embd.weight");
        int vocab = md.has(p + "vocab_size") ? md.getInt(p + "vocab_size")
                : md.has("tokenizer.ggml.tokens") ? md.getArray("tokenizer.ggml.tokens").size()
                : Math.toIntExact(embd.rows());
        if (embd.rows() != vocab) {
            throw new IllegalArgumentException(a.path() + ": token_embd.weight has " + embd.rows()
                    + " rows but the vocabulary has " + vocab + " tokens");
        }
        int nLayers = md.getInt(p + "block_count");
        if (v0 == LlamaVariant.GLM4MOE) {
            // The last nextn_predict_layers blocks predict further tokens; the main graph stops before them.
            int nextn = md.getInt(p + "nextn_predict_layers", 0);
            if (nextn < 0 || nextn >= nLayers) {
                throw new IllegalArgumentException(a.path() + ": " + p + "nextn_predict_layers = " + nextn + " must be between 0 and "
                        + p + "block_count = " + nLayers + " minus one");
            }
            nLayers -= nextn;
        }
        LlamaVariant v = v0;
        if (v == null) throw new IllegalArgumentException(a.path() + ": architecture '" + arch + "' is not one the llama engine runs ("
                + LlamaVariant.names() + ")");
        RopeConfig rope = RopeConfig.from(a, p, mla != null ? mla.rope() : headDim, v.neox);
        if ((mla != null || v == LlamaVariant.MISTRAL3) && rope.scaling().equals("yarn")) {
            // llama.cpp hands deepseek2's (and mistral3's) rotation 1 / (1 + 0.1·ln factor), which YaRN's
            // own magnitude factor cancels: the rotated parts keep their length (deepseek2's mscale goes on the scores).
            rope = new RopeConfig(rope.neox(), rope.nRot(), rope.freqBase(), rope.scaling(), rope.factor(), rope.origContext(),
                    1.0 / (1.0 + 0.1 * Math.log(rope.factor())), rope.freqFactors(), rope.longFreqFactors());
        }
        // A MoE file may leave out the dense width (Qwen3-MoE writes it, but nothing reads it then).
        Experts experts = Experts.from(a, md, p, v, md.getInt(p + "feed_forward_length", 0));
        int nFf = experts != null ? md.getInt(p + "feed_forward_length", experts.ff()) : md.getInt(p + "feed_forward_length");
        return new LlamaConfig(v, nEmbd, nLayers, nFf,
                nHead, nHeadKv, headDim,
                md.getFloat(p + (v.layerNorm != null ? "attention.layer_norm_epsilon" : "attention.layer_norm_rms_epsilon"), 1e-5f), vocab,
                md.getInt(p + "context_length", 2048), rope, v.multipliers(md, p, nLayers, nEmbd, nHead, headDim),
                v.slidingWindow(a, md, p, rope), v.softcaps(md, p), experts, v.parallel(md, p), mla,
                v == LlamaVariant.LLAMA4 ? llama4Tuning(md, p, nLayers, experts) : v == LlamaVariant.MISTRAL3 ? mistral3Tuning(a, md, p) : null);
    }

    /**
     * Llama 4's unrotated layers as llama.cpp sets them up: every fourth, with the temperature
     * (scale 0.1, floor 8192, offset 1) and the Q/K norms on the others (not for 128 experts,
     * Maverick); a file whose {@code attention.sliding_window} is 0 turns chunking and the
     * temperature off and leaves only the last layer unrotated (llama.cpp's step = block_count).
     */
    private static PositionTuning llama4Tuning(Metadata md, String p, int nLayers, Experts experts) {
        boolean qkNorm = experts == null || experts.count() != 128;
        if (md.has(p + "attention.sliding_window") && md.getInt(p + "attention.sliding_window") == 0) {
            return new PositionTuning(nLayers, qkNorm, 0f, 0, 0f, false);
        }
        return new PositionTuning(4, qkNorm, 0.1f, 8192, 1f, false);
    }

    /**
     * Mistral 3's optional temperature ({@code attention.temperature_scale}) on every layer, its
     * floor the original context ({@code rope.scaling.original_context_length}, else
     * {@code context_length}), offset 0; null without the key.
     */
    private static PositionTuning mistral3Tuning(GgufArtifact a, Metadata md, String p) {
        if (!md.has(p + "attention.temperature_scale")) return null;
        float scale = md.getFloat(p + "attention.temperature_scale", 0f);
        int floor = md.getInt(p + "rope.scaling.original_context_length", md.getInt(p + "context_length", 0));
        if (!Float.isFinite(scale) || floor <= 0) {
            throw new IllegalArgumentException(a.path() + ": " + p + "attention.temperature_scale = " + scale + " over an original context of "
                    + floor + " is not a usable temperature");
        }
        return new PositionTuning(0, false, scale, floor, 0f, true);
    }

    /**
     * DeepSeek-V2/V3's latent attention from its keys, in either of llama.cpp's layouts. Since it
     * stores {@code attn_k_b}/{@code attn_v_b}, {@code key_length} and {@code value_length} are the
     * state's view (latent + rotated key, and the latent) and {@code key_length_mla} /
     * {@code value_length_mla} the heads' ({@code nope + rope}, {@code vHead}), with one K/V head;
     * older files have one {@code attn_kv_b}, the heads' widths in {@code key_length} /
     * {@code value_length} and as many K/V heads as query heads. Both run the same latent attention.
     */
    private static Mla mla(GgufArtifact a, Metadata md, String p, int keyLength, int valueLength, int nHead, int nHeadKv) {
        int rope = md.getInt(p + "rope.dimension_count");
        int kvLora = md.getInt(p + "attention.kv_lora_rank");
        boolean kvB = a.tensorOrNull("blk.0.attn_kv_b.weight") != null;
        boolean mlaKeys = md.has(p + "attention.key_length_mla");
        if (kvB == mlaKeys) {
            throw new IllegalArgumentException(a.path() + ": this deepseek2 file " + (kvB ? "has both blk.0.attn_kv_b.weight and "
                    + p + "attention.key_length_mla" : "has neither blk.0.attn_kv_b.weight nor " + p + "attention.key_length_mla")
                    + "; llama.cpp writes one or the other (before and since its MLA layout)");
        }
        int kMla = kvB ? keyLength : md.getInt(p + "attention.key_length_mla");
        int vMla = kvB ? valueLength : md.getInt(p + "attention.value_length_mla");
        boolean shape = kvB ? nHeadKv == nHead : nHeadKv == 1 && keyLength == kvLora + rope && valueLength == kvLora;
        if (!shape || kMla <= rope) {
            throw new IllegalArgumentException(a.path() + ": deepseek2 with head_count_kv " + nHeadKv + ", key_length " + keyLength
                    + ", value_length " + valueLength + (kvB ? "" : ", key_length_mla " + kMla) + ", kv_lora_rank " + kvLora
                    + ", rope " + rope + " is not MLA's layout (" + (kvB ? "attn_kv_b: as many K/V heads as query heads"
                    : "one K/V head, key_length = kv_lora_rank + rope, value_length = kv_lora_rank") + ")");
        }
        return new Mla(md.getInt(p + "attention.q_lora_rank", 0), kvLora, kMla - rope, rope, vMla);
    }
}
