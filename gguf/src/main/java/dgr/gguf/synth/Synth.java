package dgr.gguf.synth;

import dgr.gguf.GgmlType;
import dgr.gguf.GgufWriter;
import dgr.gguf.MetaValue;
import dgr.gguf.arch.Architecture;
import dgr.gguf.arch.Architectures;
import dgr.gguf.codec.BlockCodec;
import dgr.gguf.codec.Codecs;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.stream.IntStream;

/**
 * Writes a synthetic model: a preset's shape, seeded Gaussian weights (same seed, same bytes, on
 * any number of threads: every row has its own seed), a real tokenizer. Tensors are generated,
 * quantized and written a slab of rows at a time, so memory stays bounded whatever the model size.
 *
 * <p>Scale: every matrix is N(0, 0.02²) and norm weights are 1 + 0.02·N(0,1), the same recipe as the
 * conformance llama-tiny. With RMSNorm in front of every projection, activations stay O(1) and the
 * logits spread by about 0.02·√n_embd, neither flat nor saturated.
 */
public final class Synth {
    private static final float STD = 0.02f;
    /** deepseek2-tiny's latent attention: query rank, latent rank, unrotated and rotated query/key widths, value width. */
    private static final int MLA_Q_LORA = 128, MLA_KV_LORA = 128, MLA_NOPE = 64, MLA_ROPE = 32, MLA_V = 64;
    /** Rows generated per slab: bounds memory to about SLAB_VALUES floats plus their bytes. */
    private static final int SLAB_VALUES = 1 << 22;
    /** Architectures whose synthesized files keep layer 0 dense before the experts ({@code leading_dense_block_count} 1). */
    private static final java.util.Set<String> DENSE_LEAD = java.util.Set.of("deepseek2", "glm4moe", "ernie4_5-moe", "dots1", "deepseek");
    /** Those whose shared experts are {@code expert_shared_count} experts wide, not their own width key. */
    private static final java.util.Set<String> COUNTED_SHARED = java.util.Set.of("deepseek2", "glm4moe", "dots1", "bailingmoe", "deepseek");
    /** Those with a choice bias ({@code exp_probs_b}) on each expert layer (deepseek2 too, but not its Lite shape). */
    private static final java.util.Set<String> CHOICE_BIAS = java.util.Set.of("glm4moe", "ernie4_5-moe", "dots1", "minimax-m2");

    private Synth() {}

    public record Result(Path path, long parameters, long bytes) {}

    public static Result write(SynthPreset p, QuantMix quant, long seed, Path out) {
        if (p.architecture().equals("deepseek4")) return Dsv4Synth.write(Dsv4Synth.byName(p.name()), quant, seed, out);
        Map<String, MetaValue> tok = Vocabularies.tokenizerMetadata(p.vocab());
        int vocab = ((MetaValue.MetaArray) tok.get("tokenizer.ggml.tokens").value()).elements().size();
        String a = p.architecture();
        // What the engine reads from such a file is what this writes: one table for both.
        Architecture facts = Architectures.of(a);
        if (facts == null) throw new IllegalArgumentException("preset " + p.name() + ": no architecture '" + a + "' in the table");
        GgufWriter w = new GgufWriter();
        w.put("general.architecture", MetaValue.of(a));
        w.put("general.name", MetaValue.of("dgr-synth " + p.name()));
        w.put("general.description", MetaValue.of("synthetic " + p.name() + " (" + quant.name() + ", seed " + seed
                + ") written by dgr synth; random weights, real tokenizer"));
        w.put("general.file_type", MetaValue.u32(quant.fileType()));
        w.put("general.quantization_version", MetaValue.u32(2));
        w.put("dgr.synth.preset", MetaValue.of(p.name()));
        w.put("dgr.synth.seed", MetaValue.u64(seed));
        w.put(a + ".vocab_size", MetaValue.u32(vocab));
        w.put(a + ".context_length", MetaValue.u32(p.contextLength()));
        w.put(a + ".embedding_length", MetaValue.u32(p.nEmbd()));
        w.put(a + ".block_count", MetaValue.u32(p.nLayer()));
        w.put(a + ".feed_forward_length", MetaValue.u32(p.nFf()));
        // LayerNorm blocks (the GPT lineage llama.cpp runs), with biases on their norms but Command R's.
        boolean commandR = a.equals("command-r") || a.equals("cohere2"); // logit scale
        boolean layerNorm = facts.layerNorm() != null;
        boolean normBias = layerNorm && facts.layerNorm().normBias();
        // Partial rotation: Phi-2 and GLM-4 rotate half of each head, StableLM and GPT-NeoX a quarter.
        if (commandR) w.put(a + ".logit_scale", MetaValue.f32(0.5f));
        if (!a.equals("deepseek2")) w.put(a + ".rope.dimension_count", MetaValue.u32(a.equals("phi2") || a.startsWith("glm4") || a.equals("nemotron") || a.equals("minimax-m2") ? p.headDim() / 2
                : a.equals("stablelm") || a.equals("gptneox") ? p.headDim() / 4 : p.headDim()));
        if (a.equals("gptneox")) w.put(a + ".use_parallel_residual", MetaValue.bool(true));
        w.put(a + ".attention.head_count", MetaValue.u32(p.nHead()));
        w.put(a + ".attention.head_count_kv", MetaValue.u32(p.nHeadKv()));
        boolean deepseek2 = a.equals("deepseek2"); // latent attention, dense first layer, sigmoid-routed experts
        boolean mlaLite = deepseek2 && p.name().contains("lite"); // no query rank (llama.cpp: 27 layers), V2's routing
        boolean mlaKvB = deepseek2 && p.name().contains("kvb"); // the layout before llama.cpp's MLA one: attn_kv_b
        if (deepseek2) {
            // llama.cpp's MLA keys: the state's view (latent + rotated key, latent) and the heads' widths.
            w.put(a + ".rope.dimension_count", MetaValue.u32(MLA_ROPE));
            if (mlaKvB) {
                // Before llama.cpp's MLA layout: the heads' widths under key_length/value_length.
                w.put(a + ".attention.key_length", MetaValue.u32(MLA_NOPE + MLA_ROPE));
                w.put(a + ".attention.value_length", MetaValue.u32(MLA_V));
            } else {
                w.put(a + ".attention.key_length", MetaValue.u32(MLA_KV_LORA + MLA_ROPE));
                w.put(a + ".attention.value_length", MetaValue.u32(MLA_KV_LORA));
                w.put(a + ".attention.key_length_mla", MetaValue.u32(MLA_NOPE + MLA_ROPE));
                w.put(a + ".attention.value_length_mla", MetaValue.u32(MLA_V));
            }
            if (!mlaLite) w.put(a + ".attention.q_lora_rank", MetaValue.u32(MLA_Q_LORA));
            w.put(a + ".attention.kv_lora_rank", MetaValue.u32(MLA_KV_LORA));
            putDenseLeadAndSharedExperts(w, a, p);
            if (mlaLite) {
                // DeepSeek-V2-Lite's routing (softmax, not renormalised, scale 1) in four groups of
                // which two are searched, and its YaRN (here ×4 over 512 positions, mscale_all_dim 0.707).
                w.put(a + ".expert_weights_scale", MetaValue.f32(1f));
                w.put(a + ".expert_gating_func", MetaValue.u32(1));
                w.put(a + ".expert_group_count", MetaValue.u32(4));
                w.put(a + ".expert_group_used_count", MetaValue.u32(2));
                putYarn(w, a);
                w.put(a + ".rope.scaling.yarn_log_multiplier", MetaValue.f32(0.0707f));
            } else {
                putV3Routing(w, a);
            }
        } else if (a.equals("bailingmoe")) {
            // Ling's keys (llama.cpp requires them): no dense lead, one shared expert, renormalised, scale 1.
            w.put(a + ".leading_dense_block_count", MetaValue.u32(0));
            w.put(a + ".expert_feed_forward_length", MetaValue.u32(p.experts().ff()));
            w.put(a + ".expert_shared_count", MetaValue.u32(p.experts().sharedFf() / p.experts().ff()));
            w.put(a + ".expert_weights_scale", MetaValue.f32(1f));
            w.put(a + ".expert_weights_norm", MetaValue.bool(true));
        } else if (a.equals("deepseek")) {
            // DeepSeek-MoE: a dense first layer, one shared expert, the routing weights ×2.5.
            putDenseLeadAndSharedExperts(w, a, p);
            w.put(a + ".expert_weights_scale", MetaValue.f32(2.5f));
        } else if (a.equals("minimax-m2")) {
            // MiniMax-M2's routing: sigmoid scores with a choice bias, renormalised, scale 1 (the
            // llama.cpp dgr is checked against ignores this key for minimax-m2, today's applies it).
            w.put(a + ".expert_gating_func", MetaValue.u32(2));
            w.put(a + ".expert_weights_scale", MetaValue.f32(1f));
            w.put(a + ".expert_feed_forward_length", MetaValue.u32(p.experts().ff()));
        } else if (a.equals("dots1")) {
            // dots.llm1: DeepSeek-V3's routing and experts behind Qwen3's attention, a dense first layer.
            putDenseLeadAndSharedExperts(w, a, p);
            putV3Routing(w, a);
        } else if (a.equals("glm4moe")) {
            // GLM-4.5's routing (sigmoid scores, a choice bias, renormalised, ×2.5), a dense first
            // layer, one shared expert, and one NextN layer at the end of the blocks.
            putDenseLeadAndSharedExperts(w, a, p);
            putV3Routing(w, a);
            w.put(a + ".nextn_predict_layers", MetaValue.u32(1));
        } else if (p.headDim() != p.nEmbd() / p.nHead()) {
            w.put(a + ".attention.key_length", MetaValue.u32(p.headDim()));
            w.put(a + ".attention.value_length", MetaValue.u32(p.headDim()));
        }
        w.put(a + (layerNorm ? ".attention.layer_norm_epsilon" : ".attention.layer_norm_rms_epsilon"), MetaValue.f32(1e-5f));
        SynthPreset.Experts ex = p.experts();
        if (ex != null) {
            w.put(a + ".expert_count", MetaValue.u32(ex.count()));
            w.put(a + ".expert_used_count", MetaValue.u32(ex.used()));
            // Mixtral (llama), OLMoE and Granite take the experts' width from feed_forward_length, Qwen-MoE from its own key.
            boolean ernieMoe = a.equals("ernie4_5-moe");
            if (a.startsWith("qwen") || a.equals("llama4") || ernieMoe || a.equals("hunyuan-moe")) w.put(a + ".expert_feed_forward_length", MetaValue.u32(ex.ff()));
            // ERNIE 4.5 MoE: one dense layer first (moe_layer_start_index), then experts on every layer.
            if (ernieMoe) {
                w.put(a + ".leading_dense_block_count", MetaValue.u32(1));
                w.put(a + ".interleave_moe_layer_step", MetaValue.u32(1));
            }
            // Llama 4: experts on every second layer (Maverick's interleave), dense ones between.
            if (a.equals("llama4")) w.put(a + ".interleave_moe_layer_step", MetaValue.u32(LLAMA4_MOE_STEP));
            if (ex.sharedFf() > 0 && !COUNTED_SHARED.contains(a)) w.put(a + ".expert_shared_feed_forward_length", MetaValue.u32(ex.sharedFf()));
        }
        w.put(a + ".rope.freq_base", MetaValue.f32(p.ropeFreqBase()));
        boolean olmo3 = p.name().startsWith("olmo3"); // OLMo 3 is written under olmo2, told apart by its window
        if (a.equals("gemma3") || a.equals("gemma2") || olmo3 || a.equals("cohere2") || (a.equals("exaone4") && p.nLayer() == 64)) {
            w.put(a + ".attention.sliding_window", MetaValue.u32(8));
        }
        if (olmo3) {
            // YaRN on the global layers only: the window layers rotate unscaled, which this makes visible.
            putYarn(w, a);
        }
        if (a.equals("mistral3")) {
            // Mistral 3's temperature, from an original context of 16 so that a short path crosses two of its steps.
            w.put(a + ".attention.temperature_scale", MetaValue.f32(0.5f));
            w.put(a + ".rope.scaling.original_context_length", MetaValue.u32(16));
        }
        if (a.equals("gemma2")) {
            // Soft caps small enough to bend random weights' scores and logits (Gemma 2's own are 50 and 30).
            w.put(a + ".attn_logit_softcapping", MetaValue.f32(0.3f));
            w.put(a + ".final_logit_softcapping", MetaValue.f32(2f));
        }
        if (a.equals("phi3") || a.equals("phimoe")) {
            // LongRoPE: short and long per-pair factors (tensors below) and a magnitude factor.
            w.put(a + ".rope.scaling.original_context_length", MetaValue.u32(p.contextLength()));
            w.put(a + ".rope.scaling.attn_factor", MetaValue.f32(1.19f));
        }
        if (a.startsWith("granite") || a.equals("minicpm")) {
            // Granite's four multipliers, sized so that each one moves the logits of random weights
            // (Granite 3.0-2B's own, ×12 on embeddings against ×0.22 on branches, would leave the
            // synthetic model echoing its input token whatever the layers do).
            w.put(a + ".embedding_scale", MetaValue.f32(1.5f));
            w.put(a + ".residual_scale", MetaValue.f32(4f));
            if (!a.equals("minicpm")) w.put(a + ".attention.scale", MetaValue.f32(0.5f)); // MiniCPM files have none
            w.put(a + ".logit_scale", MetaValue.f32(0.5f));
        }
        boolean gptOss = a.equals("gpt-oss"); // biases, sinks, alternate window layers, biased experts, clamped SwiGLU
        if (gptOss) {
            w.put(a + ".attention.sliding_window", MetaValue.u32(8));
            w.put(a + ".expert_feed_forward_length", MetaValue.u32(p.experts().ff()));
            // gpt-oss's YaRN (×32 over 4096 positions) scaled down to the synthetic context.
            putYarn(w, a);
        }
        w.putAll(tok);

        long[] params = {0};
        int[] index = {0};
        java.util.function.BiConsumer<String, long[]> matrix = (name, shape) -> {
            int layer = layerOf(name);
            GgmlType t = QuantMix.fitRow(quant.typeFor(name, layer, p.nLayer(), p.tiedEmbeddings()), shape[0]);
            if (shape[0] % t.blockValues != 0) {
                throw new IllegalArgumentException("tensor " + name + " row length " + shape[0]
                        + " is not a multiple of " + t + "'s block size " + t.blockValues);
            }
            long tensorSeed = mix(seed, index[0]++);
            long rows = shape[1] * (shape.length > 2 ? shape[2] : 1);
            params[0] += shape[0] * rows;
            // Gemma (1) scales embeddings by sqrt(n_embd) and has no branch-output norms: at the common
            // std the scaled embedding would outweigh every branch and the tied head would echo the input.
            float std = a.equals("gemma") && name.equals("token_embd.weight") ? STD / 4 : STD;
            w.tensor(name, t, shape, sink -> writeMatrix(sink, t, (int) shape[0], Math.toIntExact(rows), tensorSeed, std));
        };
        // Norm weights (mean 1) and biases (mean 0): n f32 values, each tensor its own seed.
        VectorTensor vector = (name, n, mean) -> {
            long tensorSeed = mix(seed, index[0]++);
            params[0] += n;
            w.tensor(name, GgmlType.F32, new long[] {n}, sink -> writeVector(sink, n, mean, tensorSeed));
        };
        // F32 tensors of N(0, std²), 1-D (rows 1) or 2-D: biases and sinks that must move the logits.
        SpreadTensor spread = (name, cols, rows, std) -> {
            long tensorSeed = mix(seed, index[0]++);
            params[0] += (long) cols * rows;
            long[] shape = rows == 1 ? new long[] {cols} : new long[] {cols, rows};
            w.tensor(name, GgmlType.F32, shape, sink -> writeMatrix(sink, GgmlType.F32, cols, rows, tensorSeed, std));
        };
        // llama.cpp requires them for qwen2; StarCoder2 and StableLM 2 (1.6B) have them too
        boolean glm4moe = a.equals("glm4moe");
        boolean qkvBias = a.equals("qwen2") || a.equals("qwen2moe") || a.equals("starcoder2") || a.equals("stablelm")
                || a.equals("seed_oss") || a.equals("gpt-oss") || glm4moe || a.equals("phimoe");
        boolean phi2 = a.equals("phi2"); // no ffn_norm (parallel blocks from one norm), output bias
        boolean glm4 = a.equals("glm4"); // fused attn_qkv with its bias, gate+up in ffn_up, branch-output norms
        boolean fusedQkvBias = phi2 || a.equals("gptneox") || a.equals("gpt2") || glm4; // one attn_qkv with its bias
        // ungated FFN with biases (the LayerNorm blocks with output biases); output-projection bias
        boolean plainFfn = facts.ungatedFfn() && layerNorm && facts.layerNorm().outputBias();
        boolean noPreNorms = !facts.preNorms();
        boolean wholeQk = facts.qkNorm() == Architecture.QkNorm.WHOLE; // all of Q and all of K normed at once
        boolean qkNorm = facts.qkNorm() != Architecture.QkNorm.NONE
                || (glm4moe && p.name().contains("qknorm")); // GLM-4.5 (355B): per head, where its file has them
        boolean postNorms = facts.postNorms();
        boolean phi3 = a.equals("phi3"); // fused attn_qkv and gate+up in ffn_up, LongRoPE factors
        boolean fusedGateUp = phi3 || a.equals("glm4");
        // Phi-3.5-MoE: a bias after every RMS norm, on the attention output and on the logits; spread
        // wider than the norms' weights so that each one moves the logits.
        boolean rmsBias = a.equals("phimoe");
        int kvDim = p.nHeadKv() * p.headDim(), qDim = p.nHead() * p.headDim();
        matrix.accept("token_embd.weight", new long[] {p.nEmbd(), vocab});
        // GPT-2's learned positions, one row per position of the context.
        if (facts.learnedPositions()) matrix.accept("position_embd.weight", new long[] {p.nEmbd(), p.contextLength()});
        vector.put("output_norm.weight", p.nEmbd(), 1f);
        if (normBias) vector.put("output_norm.bias", p.nEmbd(), 0f);
        if (!p.tiedEmbeddings()) matrix.accept("output.weight", new long[] {p.nEmbd(), vocab});
        if (phi2) vector.put("output.bias", vocab, 0f);
        if (rmsBias) {
            spread.put("output_norm.bias", p.nEmbd(), 1, 0.1f);
            vector.put("output.bias", vocab, 0f);
        }
        if (phi3 || rmsBias) {
            for (String f : new String[] {"rope_factors_short.weight", "rope_factors_long.weight"}) {
                int n = p.headDim() / 2;
                float step = f.contains("long") ? 4f : 2f;
                w.tensor(f, GgmlType.F32, new long[] {n}, sink -> writeRamp(sink, n, step));
            }
        }
        for (int i = 0; i < p.nLayer(); i++) {
            String b = "blk." + i + ".";
            if (!noPreNorms) vector.put(b + "attn_norm.weight", p.nEmbd(), 1f);
            if (normBias) vector.put(b + "attn_norm.bias", p.nEmbd(), 0f);
            if (rmsBias) spread.put(b + "attn_norm.bias", p.nEmbd(), 1, 0.1f);
            if (deepseek2) {
                // Latent attention: the query's low-rank pair with its norm, the joint latent + rotated
                // key, the latent's norm, and per head the absorption and value lifts (3-D, head-major).
                if (mlaLite) {
                    matrix.accept(b + "attn_q.weight", new long[] {p.nEmbd(), (long) p.nHead() * (MLA_NOPE + MLA_ROPE)});
                } else {
                    matrix.accept(b + "attn_q_a.weight", new long[] {p.nEmbd(), MLA_Q_LORA});
                    vector.put(b + "attn_q_a_norm.weight", MLA_Q_LORA, 1f);
                    matrix.accept(b + "attn_q_b.weight", new long[] {MLA_Q_LORA, (long) p.nHead() * (MLA_NOPE + MLA_ROPE)});
                }
                matrix.accept(b + "attn_kv_a_mqa.weight", new long[] {p.nEmbd(), MLA_KV_LORA + MLA_ROPE});
                vector.put(b + "attn_kv_a_norm.weight", MLA_KV_LORA, 1f);
                if (mlaKvB) {
                    matrix.accept(b + "attn_kv_b.weight", new long[] {MLA_KV_LORA, (long) p.nHead() * (MLA_NOPE + MLA_V)});
                } else {
                    matrix.accept(b + "attn_k_b.weight", new long[] {MLA_NOPE, MLA_KV_LORA, p.nHead()});
                    matrix.accept(b + "attn_v_b.weight", new long[] {MLA_KV_LORA, MLA_V, p.nHead()});
                }
            } else if (phi3 || fusedQkvBias) {
                matrix.accept(b + "attn_qkv.weight", new long[] {p.nEmbd(), qDim + 2L * kvDim});
                if (fusedQkvBias) vector.put(b + "attn_qkv.bias", qDim + 2 * kvDim, 0f);
            } else {
                matrix.accept(b + "attn_q.weight", new long[] {p.nEmbd(), qDim});
                matrix.accept(b + "attn_k.weight", new long[] {p.nEmbd(), kvDim});
                matrix.accept(b + "attn_v.weight", new long[] {p.nEmbd(), kvDim});
            }
            if (qkvBias) {
                vector.put(b + "attn_q.bias", qDim, 0f);
                vector.put(b + "attn_k.bias", kvDim, 0f);
                vector.put(b + "attn_v.bias", kvDim, 0f);
            }
            if (p.name().contains("-qk-")) {
                // One row of LayerNorm weights per head (StableLM 2 12B, Command R+), 2-D as their files store them.
                for (String t : new String[] {"attn_q_norm", "attn_k_norm"}) {
                    int heads = t.startsWith("attn_q") ? p.nHead() : p.nHeadKv();
                    long normSeed = mix(seed, index[0]++);
                    params[0] += (long) heads * p.headDim();
                    w.tensor(b + t + ".weight", GgmlType.F32, new long[] {p.headDim(), heads},
                            sink -> writeVector(sink, heads * p.headDim(), 1f, normSeed));
                }
            }
            if (qkNorm) {
                vector.put(b + "attn_q_norm.weight", wholeQk ? qDim : p.headDim(), 1f);
                vector.put(b + "attn_k_norm.weight", wholeQk ? kvDim : p.headDim(), 1f);
            }
            matrix.accept(b + "attn_output.weight", new long[] {deepseek2 ? (long) p.nHead() * MLA_V : qDim, p.nEmbd()});
            if (plainFfn || gptOss) vector.put(b + "attn_output.bias", p.nEmbd(), 0f);
            if (rmsBias) spread.put(b + "attn_output.bias", p.nEmbd(), 1, 0.1f);
            if (gptOss) spread.put(b + "attn_sinks.weight", p.nHead(), 1, 0.5f);
            if (postNorms) vector.put(b + "post_attention_norm.weight", p.nEmbd(), 1f);
            // Seed-OSS stores its FFN pre-norm under the post-attention name; Phi-2 and Command R have none.
            boolean ffnNorm = facts.preNorms() && !facts.oneNormBothBranches();
            if (ffnNorm) vector.put(b + facts.ffnNormTensor() + ".weight", p.nEmbd(), 1f);
            if (ffnNorm && normBias) vector.put(b + facts.ffnNormTensor() + ".bias", p.nEmbd(), 0f);
            if (rmsBias) spread.put(b + "ffn_norm.bias", p.nEmbd(), 1, 0.1f);
            boolean llama4Dense = a.equals("llama4") && (i + 1) % LLAMA4_MOE_STEP != 0;
            if (ex != null && !(DENSE_LEAD.contains(a) && i == 0) && !llama4Dense) {
                // The router stays F32 (llama-quantize never quantizes ffn_gate_inp), with weights
                // ten times the others' spread so the experts' scores part clearly: a near-tie would
                // pick different experts on engines whose activations differ in the last bits.
                long routerSeed = mix(seed, index[0]++);
                params[0] += (long) p.nEmbd() * ex.count();
                w.tensor(b + "ffn_gate_inp.weight", GgmlType.F32, new long[] {p.nEmbd(), ex.count()},
                        sink -> writeMatrix(sink, GgmlType.F32, p.nEmbd(), ex.count(), routerSeed, 10 * STD));
                // Experts as one 3-D tensor each, [cols, rows, experts]: expert e's rows follow expert e-1's.
                matrix.accept(b + "ffn_gate_exps.weight", new long[] {p.nEmbd(), ex.ff(), ex.count()});
                matrix.accept(b + "ffn_down_exps.weight", new long[] {ex.ff(), p.nEmbd(), ex.count()});
                matrix.accept(b + "ffn_up_exps.weight", new long[] {p.nEmbd(), ex.ff(), ex.count()});
                if (gptOss) {
                    // Router and expert biases, spread so that each one moves the logits.
                    spread.put(b + "ffn_gate_inp.bias", ex.count(), 1, 0.1f);
                    spread.put(b + "ffn_gate_exps.bias", ex.ff(), ex.count(), 0.1f);
                    spread.put(b + "ffn_down_exps.bias", p.nEmbd(), ex.count(), 0.1f);
                    spread.put(b + "ffn_up_exps.bias", ex.ff(), ex.count(), 0.1f);
                }
                // DeepSeek-V3's choice bias, spread like the router's scores so that it moves choices.
                if ((deepseek2 && !mlaLite) || CHOICE_BIAS.contains(a)) {
                    long biasSeed = mix(seed, index[0]++);
                    params[0] += ex.count();
                    w.tensor(b + "exp_probs_b.bias", GgmlType.F32, new long[] {ex.count()},
                            sink -> writeMatrix(sink, GgmlType.F32, ex.count(), 1, biasSeed, 0.1f));
                }
                if (ex.sharedFf() > 0) {
                    // Qwen2-MoE gates its shared expert by one row (1-D, so F32 like every vector); Granite does not.
                    if (a.equals("qwen2moe")) vector.put(b + "ffn_gate_inp_shexp.weight", p.nEmbd(), 0f);
                    matrix.accept(b + "ffn_gate_shexp.weight", new long[] {p.nEmbd(), ex.sharedFf()});
                    matrix.accept(b + "ffn_down_shexp.weight", new long[] {ex.sharedFf(), p.nEmbd()});
                    matrix.accept(b + "ffn_up_shexp.weight", new long[] {p.nEmbd(), ex.sharedFf()});
                }
            } else {
                if (!fusedGateUp && !facts.ungatedFfn()) matrix.accept(b + "ffn_gate.weight", new long[] {p.nEmbd(), p.nFf()});
                matrix.accept(b + "ffn_down.weight", new long[] {p.nFf(), p.nEmbd()});
                matrix.accept(b + "ffn_up.weight", new long[] {p.nEmbd(), (fusedGateUp ? 2L : 1L) * p.nFf()});
                if (plainFfn) {
                    vector.put(b + "ffn_up.bias", p.nFf(), 0f);
                    vector.put(b + "ffn_down.bias", p.nEmbd(), 0f);
                }
            }
            if (postNorms) vector.put(b + "post_ffw_norm.weight", p.nEmbd(), 1f);
            if (glm4moe && i == p.nLayer() - 1) {
                // The NextN layer's own tensors (llama.cpp loads them, the main graph skips the layer).
                matrix.accept(b + "nextn.eh_proj.weight", new long[] {2L * p.nEmbd(), p.nEmbd()});
                vector.put(b + "nextn.enorm.weight", p.nEmbd(), 1f);
                vector.put(b + "nextn.hnorm.weight", p.nEmbd(), 1f);
                vector.put(b + "nextn.shared_head_norm.weight", p.nEmbd(), 1f);
            }
        }
        w.write(out);
        return new Result(out, params[0], out.toFile().length());
    }

    /** Llama 4's {@code interleave_moe_layer_step} in synthesized files: layers 1, 3, … run experts. */
    static final int LLAMA4_MOE_STEP = 2;

    /** One dense first layer, then experts of the preset's width with {@code sharedFf / ff} shared ones (deepseek2, glm4moe). */
    private static void putDenseLeadAndSharedExperts(GgufWriter w, String a, SynthPreset p) {
        w.put(a + ".leading_dense_block_count", MetaValue.u32(1));
        w.put(a + ".expert_feed_forward_length", MetaValue.u32(p.experts().ff()));
        w.put(a + ".expert_shared_count", MetaValue.u32(p.experts().sharedFf() / p.experts().ff()));
    }

    /** DeepSeek-V3's routing: sigmoid scores (with the choice bias the tensors add), renormalised, ×2.5. */
    private static void putV3Routing(GgufWriter w, String a) {
        w.put(a + ".expert_weights_scale", MetaValue.f32(2.5f));
        w.put(a + ".expert_weights_norm", MetaValue.bool(true));
        w.put(a + ".expert_gating_func", MetaValue.u32(2));
    }

    /** YaRN ×4 over 512 positions: the synthetic presets' scaled-down stand-in for a model's own YaRN. */
    private static void putYarn(GgufWriter w, String a) {
        w.put(a + ".rope.scaling.type", MetaValue.of("yarn"));
        w.put(a + ".rope.scaling.factor", MetaValue.f32(4f));
        w.put(a + ".rope.scaling.original_context_length", MetaValue.u32(512));
    }

    /** Writes one F32 tensor of {@code cols × rows} values {@code std·N(0,1)}. */
    private interface SpreadTensor {
        void put(String name, int cols, int rows, float std);
    }

    /** Writes one f32 vector tensor of {@code n} values {@code mean + 0.02·N(0,1)}. */
    private interface VectorTensor {
        void put(String name, int n, float mean);
    }

    private static int layerOf(String name) {
        if (!name.startsWith("blk.")) return -1;
        return Integer.parseInt(name.substring(4, name.indexOf('.', 4)));
    }

    /** splitmix64 of (seed, i): independent streams per tensor and per row. */
    static long mix(long seed, long i) {
        long z = seed + 0x9E3779B97F4A7C15L * (i + 1);
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    private static void writeMatrix(GgufWriter.ByteSink sink, GgmlType t, int cols, int rows, long tensorSeed, float std)
            throws java.io.IOException {
        BlockCodec codec = Codecs.of(t);
        int rowBytes = Math.toIntExact(t.bytesFor(cols));
        int slabRows = Math.max(1, Math.min(rows, SLAB_VALUES / cols));
        byte[] slab = new byte[slabRows * rowBytes];
        for (int r0 = 0; r0 < rows; r0 += slabRows) {
            int n = Math.min(slabRows, rows - r0);
            int base = r0;
            MemorySegment seg = MemorySegment.ofArray(slab);
            IntStream.range(0, n).parallel().forEach(i -> {
                float[] row = new float[cols];
                SplittableRandom rnd = new SplittableRandom(mix(tensorSeed, base + i));
                for (int c = 0; c < cols; c++) row[c] = (float) (rnd.nextGaussian() * std);
                codec.quantize(row, 0, cols, seg, (long) i * rowBytes);
            });
            sink.put(ByteBuffer.wrap(slab, 0, n * rowBytes));
        }
    }

    /** {@code n} f32 values rising evenly from 1 to {@code top}: rotary frequency divisors. */
    private static void writeRamp(GgufWriter.ByteSink sink, int n, float top) throws java.io.IOException {
        ByteBuffer b = ByteBuffer.allocate(n * 4).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < n; i++) b.putFloat(1f + (top - 1f) * i / (n - 1));
        b.flip();
        sink.put(b);
    }

    /** {@code n} f32 values {@code mean + 0.02·N(0,1)}: norm weights (mean 1) or biases (mean 0). */
    private static void writeVector(GgufWriter.ByteSink sink, int n, float mean, long tensorSeed) throws java.io.IOException {
        SplittableRandom rnd = new SplittableRandom(tensorSeed);
        ByteBuffer b = ByteBuffer.allocate(n * 4).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < n; i++) b.putFloat((float) (mean + STD * rnd.nextGaussian()));
        b.flip();
        sink.put(b);
    }

    /** Names the presets and quantizations for help texts. */
    public static List<String> presetNames() {
        return SynthPreset.ALL.stream().map(SynthPreset::name).toList();
    }

}
