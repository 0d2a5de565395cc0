package dgr.gguf.synth;

import dgr.gguf.GgmlType;
import dgr.gguf.GgufValueType;
import dgr.gguf.GgufWriter;
import dgr.gguf.MetaValue;
import dgr.gguf.codec.Codecs;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * Writes a synthetic {@code deepseek4} model with every key and tensor DSV4-SPEC section 1 requires
 * (the shapes of the conformance dsv4-tiny, or the larger dsv4-small), seeded weights and a real
 * byte-level BPE vocabulary.
 *
 * <p>Scale, as for the conformance model: linear weights N(0, 1/fan_in), so every projection of an
 * RMS-normed input is O(1); norm weights 1 + 0.1·N; the hyper-connection comb bias gets +2 on its
 * diagonal so stream mixing starts near the identity; each hash-table row is a prefix of a random
 * permutation of the experts (distinct experts per token). Matrices take the requested type when
 * their row length fits its block, else F16; 1-D tensors, hyper-connection tensors, the compressor
 * position bias and the router stay F32 (as the V4 converter leaves them), the hash table is I32.
 */
public final class Dsv4Synth {
    /** A V4 shape; see DSV4-SPEC section 5 for what each number means. */
    public record Shape(String name, int nEmbd, int[] ratios, int nHash, int nHead, int headDim, int nRot, int qLora,
                        int oGroups, int oRank, int nSwa, int idxHeads, int idxDim, int idxTopK,
                        int nExpert, int nUsed, int ffExp, int nShared, int contextLength, String vocab) {
        public int nLayer() { return ratios.length; }
    }

    /** The conformance dsv4-tiny shape: hash window layer, two CSA layers with indexer, one HCA layer. */
    public static final Shape TINY = new Shape("dsv4-tiny", 256, new int[] {0, 4, 128, 4}, 1, 4, 128, 32, 128,
            2, 64, 16, 16, 64, 4, 8, 2, 128, 1, 4096, "tiny-gpt2");
    /** Every feature several times: 2 hash layers, 4 CSA and 2 HCA layers, 16 experts (4 used). */
    public static final Shape SMALL = new Shape("dsv4-small", 512, new int[] {0, 0, 4, 128, 4, 128, 4, 4}, 2, 8, 128, 64, 256,
            4, 128, 64, 16, 64, 8, 16, 4, 256, 1, 4096, "tiny-gpt2");
    public static final List<Shape> ALL = List.of(TINY, SMALL);

    private static final int HC = 4;
    private static final String A = "deepseek4.";

    private Dsv4Synth() {}

    public static boolean isPreset(String name) {
        return ALL.stream().anyMatch(s -> s.name.equals(name.toLowerCase(Locale.ROOT)));
    }

    public static Shape byName(String name) {
        for (Shape s : ALL) if (s.name.equals(name.toLowerCase(Locale.ROOT))) return s;
        throw new IllegalArgumentException("unknown deepseek4 preset '" + name + "'; known: "
                + ALL.stream().map(Shape::name).toList());
    }

    public static Synth.Result write(Shape p, QuantMix quant, long seed, Path out) {
        Map<String, MetaValue> tok = Vocabularies.tokenizerMetadata(p.vocab());
        int vocab = ((MetaValue.MetaArray) tok.get("tokenizer.ggml.tokens").value()).elements().size();
        int d = p.nEmbd, nl = p.nLayer();
        GgufWriter w = new GgufWriter();
        w.put("general.architecture", MetaValue.of("deepseek4"));
        w.put("general.name", MetaValue.of("dgr-synth " + p.name));
        w.put("general.description", MetaValue.of("synthetic " + p.name + " (" + quant.name() + ", seed " + seed
                + ") written by dgr synth; random weights, real tokenizer"));
        w.put("general.file_type", MetaValue.u32(quant.fileType()));
        w.put("general.quantization_version", MetaValue.u32(2));
        w.put("dgr.synth.preset", MetaValue.of(p.name));
        w.put("dgr.synth.seed", MetaValue.u64(seed));
        w.put(A + "vocab_size", MetaValue.u32(vocab));
        w.put(A + "context_length", MetaValue.u32(p.contextLength));
        w.put(A + "embedding_length", MetaValue.u32(d));
        w.put(A + "embedding_length_out", MetaValue.u32((long) HC * d));
        w.put(A + "block_count", MetaValue.u32(nl));
        w.put(A + "attention.head_count", MetaValue.u32(p.nHead));
        w.put(A + "attention.head_count_kv", MetaValue.u32(1));
        w.put(A + "attention.key_length", MetaValue.u32(p.headDim));
        w.put(A + "attention.value_length", MetaValue.u32(p.headDim));
        w.put(A + "rope.dimension_count", MetaValue.u32(p.nRot));
        w.put(A + "rope.freq_base", MetaValue.f32(10000f));
        w.put(A + "rope.scaling.type", MetaValue.of("yarn"));
        w.put(A + "rope.scaling.factor", MetaValue.f32(16f));
        w.put(A + "rope.scaling.original_context_length", MetaValue.u32(65536));
        w.put(A + "attention.layer_norm_rms_epsilon", MetaValue.f32(1e-6f));
        w.put(A + "attention.q_lora_rank", MetaValue.u32(p.qLora));
        w.put(A + "attention.sliding_window", MetaValue.u32(p.nSwa));
        w.put(A + "expert_count", MetaValue.u32(p.nExpert));
        w.put(A + "expert_used_count", MetaValue.u32(p.nUsed));
        w.put(A + "expert_feed_forward_length", MetaValue.u32(p.ffExp));
        w.put(A + "expert_shared_count", MetaValue.u32(p.nShared));
        w.put(A + "expert_weights_scale", MetaValue.f32(1.5f));
        w.put(A + "expert_weights_norm", MetaValue.bool(true));
        w.put(A + "expert_gating_func", MetaValue.u32(4));
        List<Float> clamps = new ArrayList<>();
        for (int i = 0; i < nl; i++) clamps.add(10f);
        w.put(A + "swiglu_clamp_exp", MetaValue.array(GgufValueType.FLOAT32, clamps));
        w.put(A + "swiglu_clamp_shexp", MetaValue.array(GgufValueType.FLOAT32, clamps));
        w.put(A + "attention.indexer.head_count", MetaValue.u32(p.idxHeads));
        w.put(A + "attention.indexer.key_length", MetaValue.u32(p.idxDim));
        w.put(A + "attention.indexer.top_k", MetaValue.u32(p.idxTopK));
        w.put(A + "attention.output_group_count", MetaValue.u32(p.oGroups));
        w.put(A + "attention.output_lora_rank", MetaValue.u32(p.oRank));
        List<Integer> ratios = new ArrayList<>();
        for (int r : p.ratios) ratios.add(r);
        w.put(A + "attention.compress_ratios", MetaValue.array(GgufValueType.INT32, ratios));
        w.put(A + "attention.compress_rope_freq_base", MetaValue.f32(160000f));
        w.put(A + "hyper_connection.count", MetaValue.u32(HC));
        w.put(A + "hyper_connection.sinkhorn_iterations", MetaValue.u32(20));
        w.put(A + "hyper_connection.epsilon", MetaValue.f32(1e-6f));
        w.put(A + "hash_layer_count", MetaValue.u32(p.nHash));
        w.putAll(tok);

        Gen g = new Gen(w, quant, seed);
        int m = (2 + HC) * HC, hd = p.nHead * p.headDim;
        g.matrix("token_embd.weight", d, vocab, 1.0);
        g.norm("output_norm.weight", d);
        g.matrix("output.weight", d, vocab, 1.0 / Math.sqrt(d));
        g.f32("output_hc_fn.weight", new long[] {HC * d, HC}, 1.0 / Math.sqrt(HC * d), 0);
        g.f32("output_hc_base.weight", new long[] {HC}, 0.1, 0);
        g.f32("output_hc_scale.weight", new long[] {1}, 0.1, 1);
        for (int i = 0; i < nl; i++) {
            String b = "blk." + i + ".";
            int ratio = p.ratios[i];
            g.norm(b + "attn_norm.weight", d);
            g.f32(b + "attn_sinks.weight", new long[] {p.nHead}, 1.0, 0);
            g.linear(b + "attn_q_a.weight", d, p.qLora);
            g.norm(b + "attn_q_a_norm.weight", p.qLora);
            g.linear(b + "attn_q_b.weight", p.qLora, hd);
            g.linear(b + "attn_kv.weight", d, p.headDim);
            g.norm(b + "attn_kv_a_norm.weight", p.headDim);
            g.linear(b + "attn_output_a.weight", hd / p.oGroups, p.oRank * p.oGroups);
            g.linear(b + "attn_output_b.weight", p.oGroups * p.oRank, d);
            for (String s : new String[] {"attn", "ffn"}) {
                g.f32(b + "hc_" + s + "_fn.weight", new long[] {HC * d, m}, 1.0 / Math.sqrt(HC * d), 0);
                g.hcBase(b + "hc_" + s + "_base.weight", m);
                g.f32(b + "hc_" + s + "_scale.weight", new long[] {3}, 0.1, 1);
            }
            if (ratio != 0) {
                int cw = (ratio == 4 ? 2 : 1) * p.headDim;
                g.linear(b + "attn_compressor_kv.weight", d, cw);
                g.linear(b + "attn_compressor_gate.weight", d, cw);
                g.f32(b + "attn_compressor_ape.weight", new long[] {cw, ratio}, 0.5, 0);
                g.norm(b + "attn_compressor_norm.weight", p.headDim);
            }
            if (ratio == 4) {
                g.linear(b + "indexer.proj.weight", d, p.idxHeads);
                g.linear(b + "indexer.attn_q_b.weight", p.qLora, p.idxHeads * p.idxDim);
                g.linear(b + "indexer_compressor_kv.weight", d, 2 * p.idxDim);
                g.linear(b + "indexer_compressor_gate.weight", d, 2 * p.idxDim);
                g.f32(b + "indexer_compressor_ape.weight", new long[] {2 * p.idxDim, 4}, 0.5, 0);
                g.norm(b + "indexer_compressor_norm.weight", p.idxDim);
            }
            g.norm(b + "ffn_norm.weight", d);
            g.f32(b + "ffn_gate_inp.weight", new long[] {d, p.nExpert}, 1.0 / Math.sqrt(d), 0);
            if (i < p.nHash) {
                g.hashTable(b + "ffn_gate_tid2eid.weight", p.nUsed, vocab, p.nExpert);
            } else {
                g.f32(b + "exp_probs_b.bias", new long[] {p.nExpert}, 0.1, 0);
            }
            g.experts(b + "ffn_gate_exps.weight", d, p.ffExp, p.nExpert);
            g.experts(b + "ffn_up_exps.weight", d, p.ffExp, p.nExpert);
            g.experts(b + "ffn_down_exps.weight", p.ffExp, d, p.nExpert);
            int fsh = p.ffExp * p.nShared;
            g.linear(b + "ffn_gate_shexp.weight", d, fsh);
            g.linear(b + "ffn_up_shexp.weight", d, fsh);
            g.linear(b + "ffn_down_shexp.weight", fsh, d);
        }
        w.write(out);
        return new Synth.Result(out, g.params, out.toFile().length());
    }

    /** Generates seeded tensors: tensor i uses stream mix(seed, i), its row r stream mix(that, r). */
    private static final class Gen {
        final GgufWriter w;
        final QuantMix quant;
        final long seed;
        int index;
        long params;

        Gen(GgufWriter w, QuantMix quant, long seed) {
            this.w = w;
            this.quant = quant;
            this.seed = seed;
        }

        long nextSeed() { return Synth.mix(seed, index++); }

        /** A linear weight {nIn, nOut}: N(0, 1/nIn). */
        void linear(String name, int nIn, int nOut) { matrix(name, nIn, nOut, 1.0 / Math.sqrt(nIn)); }

        void matrix(String name, int cols, int rows, double std) { quantized(name, new long[] {cols, rows}, cols, rows, std); }

        /** Routed experts {cols, rows, n}: n stacked linear weights. */
        void experts(String name, int cols, int rows, int n) {
            quantized(name, new long[] {cols, rows, n}, cols, rows * n, 1.0 / Math.sqrt(cols));
        }

        private void quantized(String name, long[] shape, int cols, int rows, double std) {
            GgmlType t = quant.typeFor(name, -1, 0, false);
            if (cols % t.blockValues != 0) t = GgmlType.F16; // as llama-quantize falls back for rows a block cannot tile
            GgmlType type = t;
            long s = nextSeed();
            params += (long) cols * rows;
            w.tensor(name, type, shape, sink -> {
                var codec = Codecs.of(type);
                int rowBytes = Math.toIntExact(type.bytesFor(cols));
                byte[] buf = new byte[rowBytes];
                float[] row = new float[cols];
                for (int r = 0; r < rows; r++) {
                    SplittableRandom rnd = new SplittableRandom(Synth.mix(s, r));
                    for (int c = 0; c < cols; c++) row[c] = (float) (rnd.nextGaussian() * std);
                    codec.quantize(row, 0, cols, MemorySegment.ofArray(buf), 0);
                    sink.put(buf); // copied before put returns
                }
            });
        }

        /** An F32 tensor of mean {@code mean} and deviation {@code std}. */
        void f32(String name, long[] shape, double std, double mean) {
            long n = 1;
            for (long x : shape) n *= x;
            float[] v = new float[Math.toIntExact(n)];
            SplittableRandom rnd = new SplittableRandom(nextSeed());
            for (int i = 0; i < v.length; i++) v[i] = (float) (mean + std * rnd.nextGaussian());
            put(name, shape, v);
        }

        void norm(String name, int n) { f32(name, new long[] {n}, 0.1, 1); }

        /** HC bias [pre(4) | post(4) | comb(16)]: small noise, +2 on the comb diagonal. */
        void hcBase(String name, int m) {
            float[] v = new float[m];
            SplittableRandom rnd = new SplittableRandom(nextSeed());
            for (int i = 0; i < m; i++) v[i] = (float) (0.1 * rnd.nextGaussian());
            for (int s = 0; s < HC; s++) v[2 * HC + s * HC + s] += 2f;
            put(name, new long[] {m}, v);
        }

        void hashTable(String name, int used, int vocab, int experts) {
            SplittableRandom rnd = new SplittableRandom(nextSeed());
            ByteBuffer b = ByteBuffer.allocate(used * vocab * 4).order(ByteOrder.LITTLE_ENDIAN);
            int[] perm = new int[experts];
            for (int t = 0; t < vocab; t++) {
                for (int e = 0; e < experts; e++) perm[e] = e;
                for (int j = 0; j < used; j++) {
                    int k = j + rnd.nextInt(experts - j);
                    int x = perm[j]; perm[j] = perm[k]; perm[k] = x;
                    b.putInt(perm[j]);
                }
            }
            params += (long) used * vocab;
            byte[] bytes = b.array();
            w.tensor(name, GgmlType.I32, new long[] {used, vocab}, bytes);
        }

        private void put(String name, long[] shape, float[] v) {
            ByteBuffer b = ByteBuffer.allocate(v.length * 4).order(ByteOrder.LITTLE_ENDIAN);
            for (float x : v) b.putFloat(x);
            params += v.length;
            w.tensor(name, GgmlType.F32, shape, b.array());
        }
    }
}
