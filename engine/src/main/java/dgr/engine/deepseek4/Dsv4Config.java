package dgr.engine.deepseek4;

import dgr.gguf.GgufArtifact;
import dgr.gguf.GgufFormatException;
import dgr.gguf.Metadata;
import java.util.List;

/**
 * The hyper-parameters of a {@code deepseek4} model, read from GGUF metadata and checked the way
 * llama.cpp's loader checks them (DSV4-SPEC 1.1), so a file llama.cpp rejects is rejected here too.
 *
 * @param nLayer     main layers (block_count minus the multi-token-prediction layers)
 * @param nNextn     MTP layers at the end of the block list; loaded by name only, never run
 * @param ratios     compress ratio per main layer: 0 (window only), 4 (CSA) or 128 (HCA)
 * @param ffExp      routed expert width F (layer 0's value, as llama.cpp's graph uses it)
 * @param nShared    shared experts, concatenated into one FFN of width F·nShared
 */
public record Dsv4Config(
        int vocab, int contextLength, int nEmbd, int nLayerAll, int nLayer, int nNextn,
        int nHead, int headDim, int nRot, float eps, int qLoraRank, int nSwa,
        int oGroups, int oLoraRank, int[] ratios,
        int idxHeads, int idxDim, int idxTopK,
        int hc, int sinkhornIters, float hcEps,
        int nHash, int nExpert, int nExpertUsed, int ffExp, int nShared,
        float expertWeightsScale, boolean expertWeightsNorm, float[] clampExp, float[] clampShexp,
        float ropeBase, float compressRopeBase, boolean yarn, float freqScale, int nCtxOrig) {

    static final String ARCH = "deepseek4";
    private static final int GATING_SQRT_SOFTPLUS = 4;

    /** Number of HC mixing values per sub-layer: pre (hc) + post (hc) + comb (hc²). */
    public int hcMix() { return (2 + hc) * hc; }

    /** Width of the boundary row and of one token's residual: hc streams of n_embd. */
    public int residualWidth() { return hc * nEmbd; }

    public int ratio(int layer) { return ratios[layer]; }

    public static Dsv4Config read(GgufArtifact file) {
        Metadata m = file.metadata();
        String arch = m.getString("general.architecture");
        if (!ARCH.equals(arch)) throw new GgufFormatException("not a deepseek4 model (architecture '" + arch + "')");
        String p = ARCH + ".";
        int nEmbd = m.getInt(p + "embedding_length");
        int nLayerAll = m.getInt(p + "block_count");
        int nNextn = m.getInt(p + "nextn_predict_layers", 0);
        // llama.cpp resets the MTP count when the first MTP block's projection is absent.
        if (nNextn > 0 && file.tensorOrNull("blk." + (nLayerAll - nNextn) + ".nextn.eh_proj.weight") == null) nNextn = 0;
        int nLayer = nLayerAll - nNextn;
        int nHead = perLayerFirst(m, p + "attention.head_count", nLayerAll);
        int nHeadKv = perLayerFirst(m, p + "attention.head_count_kv", nLayerAll);
        if (nHeadKv != 1) throw new GgufFormatException(p + "attention.head_count_kv must be 1 (single latent KV), found " + nHeadKv);
        int kLen = m.getInt(p + "attention.key_length");
        int vLen = m.getInt(p + "attention.value_length", kLen);
        if (kLen != vLen) throw new GgufFormatException("deepseek4 needs key_length == value_length, found " + kLen + " and " + vLen);
        // The compressor and attention run 8 channels to a vector (V4-Flash: 512).
        if (kLen <= 0 || kLen % 8 != 0) throw new GgufFormatException(p + "attention.key_length must be a positive multiple of 8, found " + kLen);
        int nRot = m.getInt(p + "rope.dimension_count");
        if (nRot > kLen || nRot % 2 != 0) throw new GgufFormatException("rope.dimension_count " + nRot + " does not fit head_dim " + kLen);
        int gating = m.getInt(p + "expert_gating_func");
        if (gating != GATING_SQRT_SOFTPLUS) {
            throw new GgufFormatException(p + "expert_gating_func must be 4 (sqrt-softplus), found " + gating);
        }
        List<Object> rl = m.getArray(p + "attention.compress_ratios");
        if (rl.size() < nLayerAll) {
            throw new GgufFormatException(p + "attention.compress_ratios has " + rl.size() + " values for " + nLayerAll + " layers");
        }
        int[] ratios = new int[nLayer];
        for (int i = 0; i < nLayer; i++) {
            ratios[i] = ((Number) rl.get(i)).intValue();
            if (ratios[i] != 0 && ratios[i] != 4 && ratios[i] != 128) {
                throw new GgufFormatException("compress ratio " + ratios[i] + " of layer " + i + " is not 0, 4 or 128");
            }
        }
        int hc = m.getInt(p + "hyper_connection.count");
        if (hc < 1) throw new GgufFormatException(p + "hyper_connection.count must be positive");
        int oGroups = m.getInt(p + "attention.output_group_count");
        if (oGroups <= 0 || nHead % oGroups != 0) {
            throw new GgufFormatException("head_count " + nHead + " is not a multiple of output_group_count " + oGroups);
        }
        float[] clampExp = floatsPerLayer(m, p + "swiglu_clamp_exp", nLayerAll, null);
        float[] clampShexp = floatsPerLayer(m, p + "swiglu_clamp_shexp", nLayerAll, clampExp);
        String scaling = m.getString(p + "rope.scaling.type", "none");
        float factor = m.getFloat(p + "rope.scaling.factor", 0f);
        int ctx = m.getInt(p + "context_length");
        int vocab = file.tensor("token_embd.weight").shape().length > 1
                ? Math.toIntExact(file.tensor("token_embd.weight").shape()[1]) : 0;
        return new Dsv4Config(
                vocab, ctx, nEmbd, nLayerAll, nLayer, nNextn,
                nHead, kLen, nRot, (float) m.getDouble(p + "attention.layer_norm_rms_epsilon"),
                m.getInt(p + "attention.q_lora_rank"), m.getInt(p + "attention.sliding_window"),
                oGroups, m.getInt(p + "attention.output_lora_rank"), ratios,
                m.getInt(p + "attention.indexer.head_count", 0), m.getInt(p + "attention.indexer.key_length", 0),
                m.getInt(p + "attention.indexer.top_k", 0),
                hc, m.getInt(p + "hyper_connection.sinkhorn_iterations"), (float) m.getDouble(p + "hyper_connection.epsilon"),
                m.getInt(p + "hash_layer_count", 0), m.getInt(p + "expert_count"),
                perLayerFirst(m, p + "expert_used_count", nLayerAll),
                perLayerFirst(m, p + "expert_feed_forward_length", nLayerAll), m.getInt(p + "expert_shared_count", 0),
                m.getFloat(p + "expert_weights_scale", 1f), m.getBool(p + "expert_weights_norm", false),
                clampExp, clampShexp,
                m.getFloat(p + "rope.freq_base", 10000f), (float) m.getDouble(p + "attention.compress_rope_freq_base"),
                "yarn".equals(scaling), factor != 0f ? 1f / factor : 1f,
                m.getInt(p + "rope.scaling.original_context_length", ctx));
    }

    /** A u32 key that may also be a per-layer array; V4's graph uses layer 0's value everywhere. */
    private static int perLayerFirst(Metadata m, String key, int nLayer) {
        var v = m.get(key).orElseThrow(() -> new GgufFormatException("missing metadata key '" + key + "'"));
        if (v.value() instanceof dgr.gguf.MetaValue.MetaArray a) {
            if (a.elements().size() != nLayer) {
                throw new GgufFormatException(key + " has " + a.elements().size() + " values for " + nLayer + " layers");
            }
            return ((Number) a.elements().getFirst()).intValue();
        }
        return Math.toIntExact(v.asLong());
    }

    private static float[] floatsPerLayer(Metadata m, String key, int nLayer, float[] dflt) {
        var v = m.get(key);
        if (v.isEmpty()) {
            if (dflt != null) return dflt.clone();
            throw new GgufFormatException("missing metadata key '" + key + "'");
        }
        float[] out = new float[nLayer];
        if (v.get().value() instanceof dgr.gguf.MetaValue.MetaArray a) {
            if (a.elements().size() != nLayer) {
                throw new GgufFormatException(key + " has " + a.elements().size() + " values for " + nLayer + " layers");
            }
            for (int i = 0; i < nLayer; i++) out[i] = ((Number) a.elements().get(i)).floatValue();
        } else {
            java.util.Arrays.fill(out, (float) v.get().asDouble());
        }
        return out;
    }
}
