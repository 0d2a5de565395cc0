package dgr.gguf.synth;

import dgr.gguf.GgmlType;
import dgr.gguf.GgufWriter;
import dgr.gguf.MetaValue;
import dgr.gguf.arch.Architecture;
import dgr.gguf.arch.Architectures;
import dgr.gguf.codec.BlockCodec;
import dgr.gguf.codec.Codecs;
import dgr.gguf.synth.SynthArchitecture.MoeKeys;
import dgr.gguf.synth.SynthArchitecture.Trait;
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
 * <p>What a file holds comes from two tables: the block shape the engine reads
 * ({@link Architectures}: norms, rotation, FFN form) and what synthesized files of the
 * architecture add ({@link SynthArchitecture}: biases, fused projections, routing keys, the
 * metadata values sized for random weights). A few presets are variants of their architecture,
 * told apart by name ({@link #write}).
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

    /** The weight seed of {@code dgr synth} without {@code --seed}: the files the docs' figures name. */
    public static final long DEFAULT_SEED = 42;

    private Synth() {}

    public record Result(Path path, long parameters, long bytes) {}

    /**
     * The preset's file: its metadata ({@link #putKeys}), its tokenizer, then its tensors
     * ({@link #putTensors}), each from the preset's shape and its architecture's two table lines.
     */
    public static Result write(SynthPreset p, QuantMix quant, long seed, Path out) {
        if (p.architecture().equals("deepseek4")) return Dsv4Synth.write(Dsv4Synth.byName(p.name()), quant, seed, out);
        Map<String, MetaValue> tok = Vocabularies.tokenizerMetadata(p.vocab());
        int vocab = ((MetaValue.MetaArray) tok.get("tokenizer.ggml.tokens").value()).elements().size();
        // What the engine reads from such a file is what this writes: one table for both.
        Architecture facts = Architectures.of(p.architecture());
        if (facts == null) throw new IllegalArgumentException("preset " + p.name() + ": no architecture '" + p.architecture() + "' in the table");
        SynthArchitecture s = SynthArchitecture.of(p.architecture());
        GgufWriter w = new GgufWriter();
        putKeys(w, p, facts, s, quant, seed, vocab);
        w.putAll(tok);
        Tensors t = new Tensors(w, p, s, quant, seed);
        putTensors(t, p, facts, s, vocab);
        w.write(out);
        return new Result(out, t.params, out.toFile().length());
    }

    /** The preset variants some presets are, by name: what their architecture's line does not say. */
    private record Variant(boolean mlaLite, boolean mlaKvB, boolean olmo3, boolean slidingWindow, boolean qkNorm,
                           boolean headLayerNorms) {
        static Variant of(SynthPreset p) {
            String n = p.name();
            return new Variant(
                    n.startsWith("deepseek2") && n.contains("lite"), // no query rank (llama.cpp: 27 layers), V2's routing
                    n.startsWith("deepseek2") && n.contains("kvb"), // the layout before llama.cpp's MLA one: attn_kv_b
                    n.startsWith("olmo3"), // OLMo 3 is written under olmo2, told apart by its window
                    n.equals("exaone4-swa-tiny"), // EXAONE 4's 32B shape: window layers
                    n.startsWith("glm4moe") && n.contains("qknorm"), // GLM-4.5 (355B): per head, where its file has them
                    n.contains("-qk-")); // one row of LayerNorm weights per head (StableLM 2 12B, Command R+)
        }
    }

    private static void putKeys(GgufWriter w, SynthPreset p, Architecture facts, SynthArchitecture s, QuantMix quant,
                                long seed, int vocab) {
        String a = p.architecture();
        Variant v = Variant.of(p);
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
        if (s.has(Trait.LOGIT_SCALE)) w.put(a + ".logit_scale", MetaValue.f32(0.5f));
        if (s.ropeDivisor() > 0) w.put(a + ".rope.dimension_count", MetaValue.u32(p.headDim() / s.ropeDivisor()));
        if (s.has(Trait.PARALLEL_RESIDUAL)) w.put(a + ".use_parallel_residual", MetaValue.bool(true));
        w.put(a + ".attention.head_count", MetaValue.u32(p.nHead()));
        w.put(a + ".attention.head_count_kv", MetaValue.u32(p.nHeadKv()));
        s.moeKeys().put(w, a, p);
        w.put(a + (facts.layerNorm() != null ? ".attention.layer_norm_epsilon" : ".attention.layer_norm_rms_epsilon"), MetaValue.f32(1e-5f));
        SynthPreset.Experts ex = p.experts();
        if (ex != null) {
            w.put(a + ".expert_count", MetaValue.u32(ex.count()));
            w.put(a + ".expert_used_count", MetaValue.u32(ex.used()));
            if (s.has(Trait.EXPERT_FF_KEY)) w.put(a + ".expert_feed_forward_length", MetaValue.u32(ex.ff()));
            if (s.interleaveStep() > 0) {
                // ERNIE 4.5 MoE: one dense layer first (moe_layer_start_index), then experts on every
                // layer; Llama 4: experts on every second layer (Maverick's interleave), dense ones between.
                if (s.has(Trait.DENSE_LEAD)) w.put(a + ".leading_dense_block_count", MetaValue.u32(1));
                w.put(a + ".interleave_moe_layer_step", MetaValue.u32(s.interleaveStep()));
            }
            if (ex.sharedFf() > 0 && !s.has(Trait.COUNTED_SHARED)) w.put(a + ".expert_shared_feed_forward_length", MetaValue.u32(ex.sharedFf()));
        }
        w.put(a + ".rope.freq_base", MetaValue.f32(p.ropeFreqBase()));
        if (s.has(Trait.SLIDING_WINDOW) || v.olmo3() || v.slidingWindow()) w.put(a + ".attention.sliding_window", MetaValue.u32(8));
        // OLMo 3's YaRN on the global layers only: the window layers rotate unscaled, which this makes visible.
        if (v.olmo3()) putYarn(w, a);
        if (s.has(Trait.TEMPERATURE_SCALE)) {
            w.put(a + ".attention.temperature_scale", MetaValue.f32(0.5f));
            w.put(a + ".rope.scaling.original_context_length", MetaValue.u32(16));
        }
        if (s.has(Trait.SOFT_CAPS)) {
            w.put(a + ".attn_logit_softcapping", MetaValue.f32(0.3f));
            w.put(a + ".final_logit_softcapping", MetaValue.f32(2f));
        }
        if (s.has(Trait.LONGROPE)) {
            // Short and long per-pair factors (tensors) and a magnitude factor.
            w.put(a + ".rope.scaling.original_context_length", MetaValue.u32(p.contextLength()));
            w.put(a + ".rope.scaling.attn_factor", MetaValue.f32(1.19f));
        }
        if (s.has(Trait.MULTIPLIERS)) {
            // Sized so that each one moves the logits of random weights (Granite 3.0-2B's own, ×12 on
            // embeddings against ×0.22 on branches, would leave the synthetic model echoing its input
            // token whatever the layers do).
            w.put(a + ".embedding_scale", MetaValue.f32(1.5f));
            w.put(a + ".residual_scale", MetaValue.f32(4f));
            if (s.has(Trait.ATTENTION_MULTIPLIER)) w.put(a + ".attention.scale", MetaValue.f32(0.5f));
            w.put(a + ".logit_scale", MetaValue.f32(0.5f));
        }
        if (s.has(Trait.SINKS_AND_BIASED_EXPERTS)) {
            // gpt-oss: alternate window layers, and its YaRN (×32 over 4096 positions) scaled down to the synthetic context.
            w.put(a + ".attention.sliding_window", MetaValue.u32(8));
            w.put(a + ".expert_feed_forward_length", MetaValue.u32(p.experts().ff()));
            putYarn(w, a);
        }
    }

    /** llama.cpp's MLA keys: the state's view (latent + rotated key, latent), the heads' widths, DeepSeek's routing. */
    static void putLatentKeys(GgufWriter w, String a, SynthPreset p) {
        Variant v = Variant.of(p);
        w.put(a + ".rope.dimension_count", MetaValue.u32(MLA_ROPE));
        if (v.mlaKvB()) {
            // Before llama.cpp's MLA layout: the heads' widths under key_length/value_length.
            w.put(a + ".attention.key_length", MetaValue.u32(MLA_NOPE + MLA_ROPE));
            w.put(a + ".attention.value_length", MetaValue.u32(MLA_V));
        } else {
            w.put(a + ".attention.key_length", MetaValue.u32(MLA_KV_LORA + MLA_ROPE));
            w.put(a + ".attention.value_length", MetaValue.u32(MLA_KV_LORA));
            w.put(a + ".attention.key_length_mla", MetaValue.u32(MLA_NOPE + MLA_ROPE));
            w.put(a + ".attention.value_length_mla", MetaValue.u32(MLA_V));
        }
        if (!v.mlaLite()) w.put(a + ".attention.q_lora_rank", MetaValue.u32(MLA_Q_LORA));
        w.put(a + ".attention.kv_lora_rank", MetaValue.u32(MLA_KV_LORA));
        MoeKeys.putDenseLeadAndSharedExperts(w, a, p);
        if (v.mlaLite()) {
            // DeepSeek-V2-Lite's routing (softmax, not renormalised, scale 1) in four groups of
            // which two are searched, and its YaRN (here ×4 over 512 positions, mscale_all_dim 0.707).
            w.put(a + ".expert_weights_scale", MetaValue.f32(1f));
            w.put(a + ".expert_gating_func", MetaValue.u32(1));
            w.put(a + ".expert_group_count", MetaValue.u32(4));
            w.put(a + ".expert_group_used_count", MetaValue.u32(2));
            putYarn(w, a);
            w.put(a + ".rope.scaling.yarn_log_multiplier", MetaValue.f32(0.0707f));
        } else {
            MoeKeys.putV3Routing(w, a);
        }
    }

    /** YaRN ×4 over 512 positions: the synthetic presets' scaled-down stand-in for a model's own YaRN. */
    private static void putYarn(GgufWriter w, String a) {
        w.put(a + ".rope.scaling.type", MetaValue.of("yarn"));
        w.put(a + ".rope.scaling.factor", MetaValue.f32(4f));
        w.put(a + ".rope.scaling.original_context_length", MetaValue.u32(512));
    }

    /**
     * Tensor writing in file order: tensor {@code i} draws from stream {@code mix(seed, i)} (its row
     * {@code r} from {@code mix(that, r)}), and every value counts towards {@link #params}.
     */
    private static final class Tensors {
        final GgufWriter w;
        final SynthPreset p;
        final SynthArchitecture s;
        final QuantMix quant;
        final long seed;
        int index;
        long params;

        Tensors(GgufWriter w, SynthPreset p, SynthArchitecture s, QuantMix quant, long seed) {
            this.w = w;
            this.p = p;
            this.s = s;
            this.quant = quant;
            this.seed = seed;
        }

        /** A matrix {cols, rows[, experts]} of the quantization's type for it, N(0, 0.02²). */
        void matrix(String name, long... shape) {
            int layer = layerOf(name);
            GgmlType t = QuantMix.fitRow(quant.typeFor(name, layer, p.nLayer(), p.tiedEmbeddings()), shape[0]);
            if (shape[0] % t.blockValues != 0) {
                throw new IllegalArgumentException("tensor " + name + " row length " + shape[0]
                        + " is not a multiple of " + t + "'s block size " + t.blockValues);
            }
            long tensorSeed = mix(seed, index++);
            long rows = shape[1] * (shape.length > 2 ? shape[2] : 1);
            params += shape[0] * rows;
            // Gemma (1) scales embeddings by sqrt(n_embd) and has no branch-output norms: at the common
            // std the scaled embedding would outweigh every branch and the tied head would echo the input.
            float std = s.has(Trait.SCALED_EMBEDDINGS) && name.equals("token_embd.weight") ? STD / 4 : STD;
            w.tensor(name, t, shape, sink -> writeMatrix(sink, t, (int) shape[0], Math.toIntExact(rows), tensorSeed, std));
        }

        /** Norm weights (mean 1) and biases (mean 0): {@code n} f32 values {@code mean + 0.02·N(0,1)}. */
        void vector(String name, int n, float mean) {
            long tensorSeed = mix(seed, index++);
            params += n;
            w.tensor(name, GgmlType.F32, new long[] {n}, sink -> writeVector(sink, n, mean, tensorSeed));
        }

        /** Norm weights of {@code rows} rows of {@code cols}, 2-D as their files store them. */
        void vectors(String name, int cols, int rows) {
            long tensorSeed = mix(seed, index++);
            params += (long) rows * cols;
            w.tensor(name, GgmlType.F32, new long[] {cols, rows}, sink -> writeVector(sink, rows * cols, 1f, tensorSeed));
        }

        /** F32 tensors of N(0, std²), 1-D (rows 1) or 2-D: routers, and biases and sinks that must move the logits. */
        void spread(String name, int cols, int rows, float std) {
            long tensorSeed = mix(seed, index++);
            params += (long) cols * rows;
            long[] shape = rows == 1 ? new long[] {cols} : new long[] {cols, rows};
            w.tensor(name, GgmlType.F32, shape, sink -> writeMatrix(sink, GgmlType.F32, cols, rows, tensorSeed, std));
        }
    }

    private static void putTensors(Tensors t, SynthPreset p, Architecture facts, SynthArchitecture s, int vocab) {
        t.matrix("token_embd.weight", p.nEmbd(), vocab);
        // GPT-2's learned positions, one row per position of the context.
        if (facts.learnedPositions()) t.matrix("position_embd.weight", p.nEmbd(), p.contextLength());
        boolean normBias = facts.layerNorm() != null && facts.layerNorm().normBias();
        t.vector("output_norm.weight", p.nEmbd(), 1f);
        if (normBias) t.vector("output_norm.bias", p.nEmbd(), 0f);
        if (!p.tiedEmbeddings()) t.matrix("output.weight", p.nEmbd(), vocab);
        if (s.has(Trait.OUTPUT_BIAS)) t.vector("output.bias", vocab, 0f);
        if (s.has(Trait.RMS_BIAS)) {
            t.spread("output_norm.bias", p.nEmbd(), 1, 0.1f);
            t.vector("output.bias", vocab, 0f);
        }
        if (s.has(Trait.LONGROPE)) {
            for (String f : new String[] {"rope_factors_short.weight", "rope_factors_long.weight"}) {
                int n = p.headDim() / 2;
                float step = f.contains("long") ? 4f : 2f;
                t.w.tensor(f, GgmlType.F32, new long[] {n}, sink -> writeRamp(sink, n, step));
            }
        }
        for (int i = 0; i < p.nLayer(); i++) putLayer(t, i, p, facts, s);
    }

    /** Block {@code i}: attention with its norms and biases, then a dense or experts FFN. */
    private static void putLayer(Tensors t, int i, SynthPreset p, Architecture facts, SynthArchitecture s) {
        Variant v = Variant.of(p);
        String b = "blk." + i + ".";
        boolean normBias = facts.layerNorm() != null && facts.layerNorm().normBias();
        // ungated FFN with biases (the LayerNorm blocks with output biases); output-projection bias
        boolean plainFfn = facts.ungatedFfn() && facts.layerNorm() != null && facts.layerNorm().outputBias();
        boolean rmsBias = s.has(Trait.RMS_BIAS), gptOss = s.has(Trait.SINKS_AND_BIASED_EXPERTS);
        int kvDim = p.nHeadKv() * p.headDim(), qDim = p.nHead() * p.headDim();
        if (facts.preNorms()) t.vector(b + "attn_norm.weight", p.nEmbd(), 1f);
        if (normBias) t.vector(b + "attn_norm.bias", p.nEmbd(), 0f);
        if (rmsBias) t.spread(b + "attn_norm.bias", p.nEmbd(), 1, 0.1f);
        if (s.has(Trait.LATENT_ATTENTION)) {
            // Latent attention: the query's low-rank pair with its norm, the joint latent + rotated
            // key, the latent's norm, and per head the absorption and value lifts (3-D, head-major).
            if (v.mlaLite()) {
                t.matrix(b + "attn_q.weight", p.nEmbd(), (long) p.nHead() * (MLA_NOPE + MLA_ROPE));
            } else {
                t.matrix(b + "attn_q_a.weight", p.nEmbd(), MLA_Q_LORA);
                t.vector(b + "attn_q_a_norm.weight", MLA_Q_LORA, 1f);
                t.matrix(b + "attn_q_b.weight", MLA_Q_LORA, (long) p.nHead() * (MLA_NOPE + MLA_ROPE));
            }
            t.matrix(b + "attn_kv_a_mqa.weight", p.nEmbd(), MLA_KV_LORA + MLA_ROPE);
            t.vector(b + "attn_kv_a_norm.weight", MLA_KV_LORA, 1f);
            if (v.mlaKvB()) {
                t.matrix(b + "attn_kv_b.weight", MLA_KV_LORA, (long) p.nHead() * (MLA_NOPE + MLA_V));
            } else {
                t.matrix(b + "attn_k_b.weight", MLA_NOPE, MLA_KV_LORA, p.nHead());
                t.matrix(b + "attn_v_b.weight", MLA_KV_LORA, MLA_V, p.nHead());
            }
        } else if (s.has(Trait.FUSED_QKV)) {
            t.matrix(b + "attn_qkv.weight", p.nEmbd(), qDim + 2L * kvDim);
            if (s.has(Trait.FUSED_QKV_BIAS)) t.vector(b + "attn_qkv.bias", qDim + 2 * kvDim, 0f);
        } else {
            t.matrix(b + "attn_q.weight", p.nEmbd(), qDim);
            t.matrix(b + "attn_k.weight", p.nEmbd(), kvDim);
            t.matrix(b + "attn_v.weight", p.nEmbd(), kvDim);
        }
        if (s.has(Trait.QKV_BIAS)) {
            t.vector(b + "attn_q.bias", qDim, 0f);
            t.vector(b + "attn_k.bias", kvDim, 0f);
            t.vector(b + "attn_v.bias", kvDim, 0f);
        }
        if (v.headLayerNorms()) {
            t.vectors(b + "attn_q_norm.weight", p.headDim(), p.nHead());
            t.vectors(b + "attn_k_norm.weight", p.headDim(), p.nHeadKv());
        }
        if (facts.qkNorm() != Architecture.QkNorm.NONE || v.qkNorm()) {
            boolean whole = facts.qkNorm() == Architecture.QkNorm.WHOLE; // all of Q and all of K normed at once
            t.vector(b + "attn_q_norm.weight", whole ? qDim : p.headDim(), 1f);
            t.vector(b + "attn_k_norm.weight", whole ? kvDim : p.headDim(), 1f);
        }
        t.matrix(b + "attn_output.weight", s.has(Trait.LATENT_ATTENTION) ? (long) p.nHead() * MLA_V : qDim, p.nEmbd());
        if (plainFfn || gptOss) t.vector(b + "attn_output.bias", p.nEmbd(), 0f);
        if (rmsBias) t.spread(b + "attn_output.bias", p.nEmbd(), 1, 0.1f);
        if (gptOss) t.spread(b + "attn_sinks.weight", p.nHead(), 1, 0.5f);
        if (facts.postNorms()) t.vector(b + "post_attention_norm.weight", p.nEmbd(), 1f);
        // Seed-OSS stores its FFN pre-norm under the post-attention name; Phi-2 and Command R have none.
        boolean ffnNorm = facts.preNorms() && !facts.oneNormBothBranches();
        if (ffnNorm) t.vector(b + facts.ffnNormTensor() + ".weight", p.nEmbd(), 1f);
        if (ffnNorm && normBias) t.vector(b + facts.ffnNormTensor() + ".bias", p.nEmbd(), 0f);
        if (rmsBias) t.spread(b + "ffn_norm.bias", p.nEmbd(), 1, 0.1f);
        SynthPreset.Experts ex = p.experts();
        boolean denseLayer = (s.has(Trait.DENSE_LEAD) && i == 0) || (s.interleaveStep() > 0 && (i + 1) % s.interleaveStep() != 0);
        if (ex != null && !denseLayer) {
            putExperts(t, b, p, s, ex);
        } else {
            boolean fusedGateUp = s.has(Trait.FUSED_GATE_UP);
            if (!fusedGateUp && !facts.ungatedFfn()) t.matrix(b + "ffn_gate.weight", p.nEmbd(), p.nFf());
            t.matrix(b + "ffn_down.weight", p.nFf(), p.nEmbd());
            t.matrix(b + "ffn_up.weight", p.nEmbd(), (fusedGateUp ? 2L : 1L) * p.nFf());
            if (plainFfn) {
                t.vector(b + "ffn_up.bias", p.nFf(), 0f);
                t.vector(b + "ffn_down.bias", p.nEmbd(), 0f);
            }
        }
        if (facts.postNorms()) t.vector(b + "post_ffw_norm.weight", p.nEmbd(), 1f);
        if (s.has(Trait.NEXTN) && i == p.nLayer() - 1) {
            // The NextN layer's own tensors (llama.cpp loads them, the main graph skips the layer).
            t.matrix(b + "nextn.eh_proj.weight", 2L * p.nEmbd(), p.nEmbd());
            t.vector(b + "nextn.enorm.weight", p.nEmbd(), 1f);
            t.vector(b + "nextn.hnorm.weight", p.nEmbd(), 1f);
            t.vector(b + "nextn.shared_head_norm.weight", p.nEmbd(), 1f);
        }
    }

    /** An experts FFN: router, the experts as 3-D tensors, their biases and shared experts where the architecture has them. */
    private static void putExperts(Tensors t, String b, SynthPreset p, SynthArchitecture s, SynthPreset.Experts ex) {
        // The router stays F32 (llama-quantize never quantizes ffn_gate_inp), with weights ten times
        // the others' spread so the experts' scores part clearly: a near-tie would pick different
        // experts on engines whose activations differ in the last bits.
        t.spread(b + "ffn_gate_inp.weight", p.nEmbd(), ex.count(), 10 * STD);
        // Experts as one 3-D tensor each, [cols, rows, experts]: expert e's rows follow expert e-1's.
        t.matrix(b + "ffn_gate_exps.weight", p.nEmbd(), ex.ff(), ex.count());
        t.matrix(b + "ffn_down_exps.weight", ex.ff(), p.nEmbd(), ex.count());
        t.matrix(b + "ffn_up_exps.weight", p.nEmbd(), ex.ff(), ex.count());
        if (s.has(Trait.SINKS_AND_BIASED_EXPERTS)) {
            // Router and expert biases, spread so that each one moves the logits.
            t.spread(b + "ffn_gate_inp.bias", ex.count(), 1, 0.1f);
            t.spread(b + "ffn_gate_exps.bias", ex.ff(), ex.count(), 0.1f);
            t.spread(b + "ffn_down_exps.bias", p.nEmbd(), ex.count(), 0.1f);
            t.spread(b + "ffn_up_exps.bias", ex.ff(), ex.count(), 0.1f);
        }
        // DeepSeek-V3's choice bias (not V2-Lite's), spread like the router's scores so that it moves choices.
        if ((s.has(Trait.LATENT_ATTENTION) && !Variant.of(p).mlaLite()) || s.has(Trait.CHOICE_BIAS)) {
            t.spread(b + "exp_probs_b.bias", ex.count(), 1, 0.1f);
        }
        if (ex.sharedFf() > 0) {
            // Qwen2-MoE gates its shared expert by one row (1-D, so F32 like every vector); Granite does not.
            if (s.has(Trait.SHARED_EXPERT_GATE)) t.vector(b + "ffn_gate_inp_shexp.weight", p.nEmbd(), 0f);
            t.matrix(b + "ffn_gate_shexp.weight", p.nEmbd(), ex.sharedFf());
            t.matrix(b + "ffn_down_shexp.weight", ex.sharedFf(), p.nEmbd());
            t.matrix(b + "ffn_up_shexp.weight", p.nEmbd(), ex.sharedFf());
        }
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
