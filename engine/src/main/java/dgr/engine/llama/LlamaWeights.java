package dgr.engine.llama;

import dgr.engine.kernel.RowDecoder;
import dgr.engine.kernel.WeightMatrix;
import dgr.gguf.GgufArtifact;
import dgr.gguf.TensorInfo;

/**
 * The tensors one stage needs: layers {@code [first, end)}, plus token embeddings on the first
 * stage (and GPT-2's learned position embeddings) and final norm + output projection on the last.
 * Matrices stay in the mapped file.
 */
record LlamaWeights(WeightMatrix tokenEmbd, WeightMatrix positionEmbd, Layer[] layers, float[] outputNorm, WeightMatrix output,
                    Biases biases) {

    /**
     * The output norm's bias (LayerNorm variants) and the logits' ({@code output.bias}, Phi-2), each
     * null where the model has none ({@link #NONE} for every RMSNorm variant).
     */
    record Biases(float[] outputNorm, float[] output) {
        static final Biases NONE = new Biases(null, null);
    }

    /**
     * One LayerNorm block's extra vectors: the norms' biases ({@code ffnNorm} null in parallel
     * blocks, which have no FFN norm) and the biases of the attention output, the ungated FFN's up
     * and down projections (each null where the file has none; {@link #NONE} for RMSNorm variants).
     */
    record LayerBiases(float[] attnNorm, float[] ffnNorm, float[] attnOut, float[] up, float[] down) {
        static final LayerBiases NONE = new LayerBiases(null, null, null, null, null);
    }


    /**
     * One block's tensors. The biases (Qwen2), the Q and K norms (per head: Qwen3, Gemma 3; whole:
     * OLMo 2) and the norms on each branch's output (Gemma 2 and 3, OLMo 2) are null where the
     * architecture has none, and so are the pre-norms in OLMo 2, which has none.
     */
    record Layer(float[] attnNorm, WeightMatrix wq, WeightMatrix wk, WeightMatrix wv, float[] bq, float[] bk, float[] bv,
                 float[] qNorm, float[] kNorm, WeightMatrix wo, float[] postAttnNorm, float[] ffnNorm, WeightMatrix gate,
                 WeightMatrix up, WeightMatrix down, float[] postFfnNorm, Experts experts, LayerBiases biases, Mla mla,
                 float[] sinks) {}

    /**
     * DeepSeek's latent attention in place of wk and wv (null; wq is the plain query projection of
     * files without a query rank, else null too): the query's down projection, its norm and up
     * projection ({@code qa}, {@code qaNorm}, {@code qb}; null without a query rank), the joint
     * down projection to latent + rotated key ({@code kvA}) and the latent's norm, and per head the
     * absorption of the query's unrotated part into the latent ({@code kb}: head {@code h}'s
     * {@code kvLoraRank} rows follow head {@code h−1}'s) and the lift from the latent to the head's
     * values ({@code vb}: {@code vHead} rows per head).
     */
    record Mla(WeightMatrix qa, float[] qaNorm, WeightMatrix qb, WeightMatrix kvA, float[] kvANorm, WeightMatrix kb,
               WeightMatrix vb) {
        Mla prepared(dgr.engine.kernel.Kernels k, java.lang.foreign.Arena arena) {
            return new Mla(prepare(k, qa, arena), qaNorm, prepare(k, qb, arena), k.prepare(kvA, arena), kvANorm,
                    k.prepare(kb, arena), k.prepare(vb, arena));
        }
    }

    /**
     * A mixture-of-experts FFN in place of gate, up and down (which are then null): the router
     * ({@code ffn_gate_inp}, one row per expert), expert {@code e}'s projections {@code gate[e]},
     * {@code up[e]}, {@code down[e]}, and an optional shared expert.
     */
    static final class Experts {
        final WeightMatrix router;
        final WeightMatrix[] gate, up, down;
        private final ExpertMatrices gates, ups, downs;
        /** The shared expert: its one-row sigmoid gate (Qwen2-MoE; null for Granite's ungated one) and its FFN; all null without one. */
        final WeightMatrix sharedGateInp, sharedGate, sharedUp, sharedDown;
        /** DeepSeek-V3's {@code exp_probs_b}: added to the gate's probabilities to choose, not to weigh; null without. */
        final float[] selectionBias;
        /**
         * gpt-oss's biases, null elsewhere: the router's (added to its scores) and, per expert
         * {@code e}, its gate's, up's and down's ({@code gateBias[e]} …).
         */
        final float[] routerBias;
        final float[][] gateBias, upBias, downBias;

        Experts(WeightMatrix router, ExpertMatrices gates, ExpertMatrices ups, ExpertMatrices downs,
                WeightMatrix sharedGateInp, WeightMatrix sharedGate, WeightMatrix sharedUp, WeightMatrix sharedDown,
                float[] selectionBias, float[] routerBias, float[][] gateBias, float[][] upBias, float[][] downBias) {
            this.selectionBias = selectionBias;
            this.routerBias = routerBias;
            this.gateBias = gateBias;
            this.upBias = upBias;
            this.downBias = downBias;
            this.router = router;
            this.gates = gates;
            this.ups = ups;
            this.downs = downs;
            this.gate = gates.each();
            this.up = ups.each();
            this.down = downs.each();
            this.sharedGateInp = sharedGateInp;
            this.sharedGate = sharedGate;
            this.sharedUp = sharedUp;
            this.sharedDown = sharedDown;
        }

        Experts prepared(dgr.engine.kernel.Kernels k, java.lang.foreign.Arena arena) {
            return new Experts(k.prepare(router, arena), gates.prepared(k, arena), ups.prepared(k, arena), downs.prepared(k, arena),
                    prepare(k, sharedGateInp, arena), prepare(k, sharedGate, arena), prepare(k, sharedUp, arena),
                    prepare(k, sharedDown, arena), selectionBias, routerBias, gateBias, upBias, downBias);
        }
    }

    /**
     * One projection of every expert: expert {@code e}'s matrix is {@code each[e]}; {@code whole} is
     * the 3-D {@code ffn_*_exps} tensor they are row slices of, or null where the file stores each
     * expert as a tensor of its own ({@code ffn_gate.E}: Mixtral files converted before April 2024,
     * which llama.cpp still loads).
     */
    record ExpertMatrices(WeightMatrix whole, WeightMatrix[] each) {
        /** Expert {@code e}'s rows of a 3-D tensor read as one matrix. */
        static ExpertMatrices rowsOf(WeightMatrix whole, int count) {
            int rows = whole.rows() / count;
            WeightMatrix[] each = new WeightMatrix[count];
            for (int e = 0; e < count; e++) each[e] = whole.rowSlice(whole.name() + "[" + e + "]", e * rows, rows);
            return new ExpertMatrices(whole, each);
        }

        /**
         * Repacked: a 3-D tensor whole (one allocation, on huge pages), then sliced again, unless the
         * kernels' layout keeps rows in groups an expert's rows do not fill; split experts one by one.
         */
        ExpertMatrices prepared(dgr.engine.kernel.Kernels k, java.lang.foreign.Arena arena) {
            if (whole != null && (whole.rows() / each.length) % k.rowGroup(whole) == 0) return rowsOf(k.prepare(whole, arena), each.length);
            WeightMatrix[] out = new WeightMatrix[each.length];
            for (int e = 0; e < each.length; e++) out[e] = k.prepare(each[e], arena);
            return new ExpertMatrices(null, out);
        }
    }

    /**
     * The same weights with every projection matrix in the kernels' preferred layout (copies live
     * in {@code arena}). The token embeddings stay in the file: lookups read single rows.
     */
    LlamaWeights prepared(dgr.engine.kernel.Kernels k, java.lang.foreign.Arena arena) {
        Layer[] ls = new Layer[layers.length];
        for (int i = 0; i < ls.length; i++) {
            Layer l = layers[i];
            ls[i] = new Layer(l.attnNorm(), prepare(k, l.wq(), arena), prepare(k, l.wk(), arena), prepare(k, l.wv(), arena),
                    l.bq(), l.bk(), l.bv(), l.qNorm(), l.kNorm(), k.prepare(l.wo(), arena), l.postAttnNorm(), l.ffnNorm(),
                    prepare(k, l.gate(), arena), prepare(k, l.up(), arena), prepare(k, l.down(), arena), l.postFfnNorm(),
                    l.experts() == null ? null : l.experts().prepared(k, arena), l.biases(),
                    l.mla() == null ? null : l.mla().prepared(k, arena), l.sinks());
        }
        return new LlamaWeights(tokenEmbd, positionEmbd, ls, outputNorm, output == null ? null : k.prepare(output, arena), biases);
    }

    private static WeightMatrix prepare(dgr.engine.kernel.Kernels k, WeightMatrix m, java.lang.foreign.Arena arena) {
        return m == null ? null : k.prepare(m, arena);
    }

    static LlamaWeights load(GgufArtifact a, LlamaConfig c, int first, int end) {
        boolean firstStage = first == 0, lastStage = end == c.nLayers();
        Reader r = new Reader(a);
        WeightMatrix embd = firstStage ? r.matrix("token_embd.weight", c.nEmbd(), c.vocabSize()) : null;
        WeightMatrix pos = firstStage && c.variant().learnedPositions()
                ? r.matrix("position_embd.weight", c.nEmbd(), c.trainContext()) : null;
        Layer[] layers = new Layer[end - first];
        LlamaVariant v = c.variant();
        // Q/K norms one head wide or as wide as Q and K; llama.cpp requires them where the variant has them.
        int qNorm = v.qkNorm == dgr.gguf.arch.Architecture.QkNorm.PER_HEAD ? c.headDim() : c.qDim();
        int kNorm = v.qkNorm == dgr.gguf.arch.Architecture.QkNorm.PER_HEAD ? c.headDim() : c.kvDim();
        boolean qk = v.qkNorm != dgr.gguf.arch.Architecture.QkNorm.NONE;
        dgr.gguf.arch.Architecture.LayerNorm ln = v.layerNorm;
        boolean plain = v.ffn.kind() == FfnShape.Kind.PLAIN, ffnNorm = v.preNorms && c.parallel() != LlamaVariant.Parallel.SHARED_NORM;
        for (int l = first; l < end; l++) {
            String p = "blk." + l + ".";
            // StableLM 2 12B and Command R+: per-head LayerNorm weights for Q and K, one row per head
            // (llama.cpp reads Command R's only at 64 layers, Command R+'s depth; elsewhere they are refused, unread).
            boolean lnQk = ln != null && r.has(p + "attn_q_norm.weight") && (v != LlamaVariant.COMMAND_R || c.nLayers() >= 64);
            // GLM-4.5 (355B) has per-head RMS norms on Q and K, GLM-4.5-Air none: read where present.
            boolean glmQk = v == LlamaVariant.GLM4MOE && r.has(p + "attn_q_norm.weight");
            LlamaConfig.Mla mc = c.mla();
            Mla mla = mc == null ? null : mla(r, c, mc, p);
            WeightMatrix[] qkv = mc == null ? attentionProjections(r, c, p)
                    : new WeightMatrix[] {mc.qLoraRank() > 0 ? null : r.matrix(p + "attn_q.weight", c.nEmbd(), c.nHead() * (mc.nope() + mc.rope())), null, null};
            float[][] qkvBias = mc == null ? attentionBiases(r, c, p) : new float[3][];
            Experts experts = c.experts() == null || !c.experts().at(l) ? null : experts(r, c, p);
            WeightMatrix[] gateUp = experts != null ? new WeightMatrix[2]
                    : plain ? new WeightMatrix[] {null, r.matrix(p + "ffn_up.weight", c.nEmbd(), c.nFf())} : gateAndUp(r, c, p);
            LayerBiases lb = ln != null ? layerBiases(r, c, p, ln, ffnNorm, plain)
                    : v == LlamaVariant.GPT_OSS ? new LayerBiases(null, null, r.vector(p + "attn_output.bias", c.nEmbd()), null, null)
                    : v.rmsNormBiases() ? new LayerBiases(r.vector(p + "attn_norm.bias", c.nEmbd()), r.vector(p + "ffn_norm.bias", c.nEmbd()),
                            r.vector(p + "attn_output.bias", c.nEmbd()), null, null)
                    : LayerBiases.NONE;
            layers[l - first] = new Layer(
                    v.preNorms ? r.vector(p + "attn_norm.weight", c.nEmbd()) : null,
                    qkv[0], qkv[1], qkv[2],
                    qkvBias[0], qkvBias[1], qkvBias[2],
                    qk ? r.vector(p + "attn_q_norm.weight", qNorm) : lnQk ? r.vector(p + "attn_q_norm.weight", c.qDim())
                            : glmQk ? r.vector(p + "attn_q_norm.weight", c.headDim()) : null,
                    qk ? r.vector(p + "attn_k_norm.weight", kNorm) : lnQk ? r.vector(p + "attn_k_norm.weight", c.kvDim())
                            : glmQk ? r.vector(p + "attn_k_norm.weight", c.headDim()) : null,
                    r.matrix(p + "attn_output.weight", mc == null ? c.qDim() : c.nHead() * mc.vHead(), c.nEmbd()),
                    v.postNorms ? r.vector(p + "post_attention_norm.weight", c.nEmbd()) : null,
                    ffnNorm ? r.vector(p + v.ffnNormTensor() + ".weight", c.nEmbd()) : null,
                    gateUp[0], gateUp[1],
                    experts != null ? null : r.matrix(p + "ffn_down.weight", c.nFf(), c.nEmbd()),
                    v.postNorms ? r.vector(p + "post_ffw_norm.weight", c.nEmbd()) : null,
                    experts, lb, mla, v == LlamaVariant.GPT_OSS ? r.vector(p + "attn_sinks.weight", c.nHead()) : null);
        }
        r.refuseUnreadBlocks(c, first, end);
        float[] outNorm = null;
        WeightMatrix out = null;
        Biases biases = Biases.NONE;
        if (lastStage) {
            outNorm = r.vector("output_norm.weight", c.nEmbd());
            if (ln != null) {
                biases = new Biases(ln.normBias() ? r.vector("output_norm.bias", c.nEmbd()) : null,
                        ln.outputBias() ? r.optionalVector("output.bias", c.vocabSize()) : null);
            } else if (v.rmsNormBiases()) {
                biases = new Biases(r.vector("output_norm.bias", c.nEmbd()), r.vector("output.bias", c.vocabSize()));
            }
            // Tied embeddings: without output.weight the token embedding matrix projects to logits.
            out = r.has("output.weight")
                    ? r.matrix("output.weight", c.nEmbd(), c.vocabSize())
                    : r.matrix("token_embd.weight", c.nEmbd(), c.vocabSize());
        }
        return new LlamaWeights(embd, pos, layers, outNorm, out, biases);
    }

    /** One layer's latent-attention tensors (llama.cpp's names and shapes for {@code deepseek2}). */
    private static Mla mla(Reader r, LlamaConfig c, LlamaConfig.Mla m, String p) {
        int e = c.nEmbd(), h = c.nHead(), q = m.qLoraRank();
        boolean kvB = r.has(p + "attn_kv_b.weight");
        WeightMatrix[] kb = kvB ? splitKvB(r.matrix(p + "attn_kv_b.weight", m.kvLoraRank(), h * (m.nope() + m.vHead())), m, h) : null;
        return new Mla(q > 0 ? r.matrix(p + "attn_q_a.weight", e, q) : null,
                q > 0 ? r.vector(p + "attn_q_a_norm.weight", q) : null,
                q > 0 ? r.matrix(p + "attn_q_b.weight", q, h * (m.nope() + m.rope())) : null,
                r.matrix(p + "attn_kv_a_mqa.weight", e, m.stateDim()),
                r.vector(p + "attn_kv_a_norm.weight", m.kvLoraRank()),
                kvB ? kb[0] : r.experts(p + "attn_k_b.weight", m.nope(), m.kvLoraRank(), h),
                kvB ? kb[1] : r.experts(p + "attn_v_b.weight", m.kvLoraRank(), m.vHead(), h));
    }

    /**
     * An older file's {@code attn_kv_b} (per head {@code nope} rows of K, then {@code vHead} rows of
     * V, each {@code kvLoraRank} wide) as the two matrices llama.cpp's converter now writes: the K
     * rows of each head transposed into {@code kvLoraRank} rows of {@code nope} (decoded to F32, so
     * exact), and the V rows of every head gathered in head order (their bytes copied, so the same
     * values in the same type). The copies live as long as the matrices.
     */
    private static WeightMatrix[] splitKvB(WeightMatrix kvB, LlamaConfig.Mla m, int heads) {
        int nope = m.nope(), lr = m.kvLoraRank(), vh = m.vHead(), per = nope + vh;
        java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofAuto();
        java.lang.foreign.MemorySegment kb = arena.allocate((long) heads * lr * nope * Float.BYTES, 64);
        float[] row = new float[lr];
        for (int h = 0; h < heads; h++) {
            for (int n = 0; n < nope; n++) {
                RowDecoder.decodeRow(kvB, h * per + n, row, 0);
                for (int r = 0; r < lr; r++) {
                    kb.setAtIndex(java.lang.foreign.ValueLayout.JAVA_FLOAT_UNALIGNED, ((long) h * lr + r) * nope + n, row[r]);
                }
            }
        }
        java.lang.foreign.MemorySegment vb = arena.allocate((long) heads * vh * kvB.rowBytes(), 64);
        for (int h = 0; h < heads; h++) {
            java.lang.foreign.MemorySegment.copy(kvB.data(), kvB.rowOffset(h * per + nope), vb, (long) h * vh * kvB.rowBytes(),
                    vh * kvB.rowBytes());
        }
        String n = kvB.name();
        return new WeightMatrix[] {new WeightMatrix(n + "[k, transposed]", dgr.gguf.GgmlType.F32, heads * lr, nope, (long) nope * Float.BYTES, kb),
            new WeightMatrix(n + "[v]", kvB.type(), heads * vh, lr, kvB.rowBytes(), vb)};
    }

    /**
     * A LayerNorm block's biases: its norms' (required where {@code ln.normBias()}; no FFN norm in
     * Phi-2's shared-norm blocks), the attention output's and the ungated FFN's (where the file has them).
     */
    private static LayerBiases layerBiases(Reader r, LlamaConfig c, String p, dgr.gguf.arch.Architecture.LayerNorm ln, boolean ffnNorm,
                                           boolean plain) {
        return new LayerBiases(ln.normBias() ? r.vector(p + "attn_norm.bias", c.nEmbd()) : null,
                ffnNorm && ln.normBias() ? r.vector(p + c.variant().ffnNormTensor() + ".bias", c.nEmbd()) : null,
                ln.outputBias() ? r.optionalVector(p + "attn_output.bias", c.nEmbd()) : null,
                plain ? r.optionalVector(p + "ffn_up.bias", c.nFf()) : null,
                plain ? r.optionalVector(p + "ffn_down.bias", c.nEmbd()) : null);
    }

    /** Q, K and V's biases where the file has them: three tensors, or one {@code attn_qkv.bias} split as its matrix is. */
    private static float[][] attentionBiases(Reader r, LlamaConfig c, String p) {
        if (!r.has(p + "attn_qkv.bias")) {
            return new float[][] {r.optionalVector(p + "attn_q.bias", c.qDim()), r.optionalVector(p + "attn_k.bias", c.kvDim()),
                r.optionalVector(p + "attn_v.bias", c.kvDim())};
        }
        float[] b = r.vector(p + "attn_qkv.bias", c.qDim() + 2 * c.kvDim());
        return new float[][] {java.util.Arrays.copyOfRange(b, 0, c.qDim()),
            java.util.Arrays.copyOfRange(b, c.qDim(), c.qDim() + c.kvDim()),
            java.util.Arrays.copyOfRange(b, c.qDim() + c.kvDim(), c.qDim() + 2 * c.kvDim())};
    }

    /** Q, K and V: three tensors, or Phi-3's one {@code attn_qkv} whose rows are Q's, then K's, then V's. */
    private static WeightMatrix[] attentionProjections(Reader r, LlamaConfig c, String p) {
        if (!r.has(p + "attn_qkv.weight")) {
            return new WeightMatrix[] {r.matrix(p + "attn_q.weight", c.nEmbd(), c.qDim()),
                r.matrix(p + "attn_k.weight", c.nEmbd(), c.kvDim()), r.matrix(p + "attn_v.weight", c.nEmbd(), c.kvDim())};
        }
        WeightMatrix qkv = r.matrix(p + "attn_qkv.weight", c.nEmbd(), c.qDim() + 2 * c.kvDim());
        return new WeightMatrix[] {qkv.rowSlice(p + "attn_qkv.weight[q]", 0, c.qDim()),
            qkv.rowSlice(p + "attn_qkv.weight[k]", c.qDim(), c.kvDim()),
            qkv.rowSlice(p + "attn_qkv.weight[v]", c.qDim() + c.kvDim(), c.kvDim())};
    }

    /**
     * The FFN's gate and up projections: two tensors, or Phi-3's one {@code ffn_up} of {@code 2·n_ff}
     * rows whose first half is the gate (ggml's {@code swiglu} applies SiLU to the first half).
     */
    private static WeightMatrix[] gateAndUp(Reader r, LlamaConfig c, String p) {
        if (r.has(p + "ffn_gate.weight") || r.artifact.tensor(p + "ffn_up.weight").rows() == c.nFf()) {
            return new WeightMatrix[] {r.matrix(p + "ffn_gate.weight", c.nEmbd(), c.nFf()), r.matrix(p + "ffn_up.weight", c.nEmbd(), c.nFf())};
        }
        WeightMatrix up = r.matrix(p + "ffn_up.weight", c.nEmbd(), 2 * c.nFf());
        return new WeightMatrix[] {up.rowSlice(p + "ffn_up.weight[gate]", 0, c.nFf()), up.rowSlice(p + "ffn_up.weight[up]", c.nFf(), c.nFf())};
    }

    /**
     * The router, every expert's gate, up and down (row slices of the three 3-D tensors, or the
     * older files' one tensor per expert), and the shared expert if any.
     */
    private static Experts experts(Reader r, LlamaConfig c, String p) {
        LlamaConfig.Experts x = c.experts();
        boolean shared = x.sharedFf() > 0, oss = c.variant() == LlamaVariant.GPT_OSS;
        return new Experts(r.matrix(p + "ffn_gate_inp.weight", c.nEmbd(), x.count()),
                expertMatrices(r, p, "ffn_gate", c.nEmbd(), x.ff(), x.count()),
                expertMatrices(r, p, "ffn_up", c.nEmbd(), x.ff(), x.count()),
                expertMatrices(r, p, "ffn_down", x.ff(), c.nEmbd(), x.count()),
                shared && x.sharedGated() ? r.matrix(p + "ffn_gate_inp_shexp.weight", c.nEmbd(), 1) : null,
                shared ? r.matrix(p + "ffn_gate_shexp.weight", c.nEmbd(), x.sharedFf()) : null,
                shared ? r.matrix(p + "ffn_up_shexp.weight", c.nEmbd(), x.sharedFf()) : null,
                shared ? r.matrix(p + "ffn_down_shexp.weight", x.sharedFf(), c.nEmbd()) : null,
                switch (c.variant().ffn.routing().choiceBias()) {
                    case NONE -> null;
                    case OPTIONAL -> r.optionalVector(p + "exp_probs_b.bias", x.count());
                    case REQUIRED -> r.vector(p + "exp_probs_b.bias", x.count());
                },
                oss ? r.vector(p + "ffn_gate_inp.bias", x.count()) : null,
                oss ? perExpert(r.vector(p + "ffn_gate_exps.bias", x.count() * x.ff()), x.count()) : null,
                oss ? perExpert(r.vector(p + "ffn_up_exps.bias", x.count() * x.ff()), x.count()) : null,
                oss ? perExpert(r.vector(p + "ffn_down_exps.bias", x.count() * c.nEmbd()), x.count()) : null);
    }

    /** A 2-D bias tensor, one row per expert, as one array per expert. */
    private static float[][] perExpert(float[] all, int count) {
        int n = all.length / count;
        float[][] out = new float[count][];
        for (int e = 0; e < count; e++) out[e] = java.util.Arrays.copyOfRange(all, e * n, (e + 1) * n);
        return out;
    }

    /** {@code PROJ_exps} as one 3-D tensor, or, where a file has none, {@code PROJ.0} … {@code PROJ.(n−1)}. */
    private static ExpertMatrices expertMatrices(Reader r, String p, String proj, int cols, int rows, int n) {
        if (r.has(p + proj + "_exps.weight") || !r.has(p + proj + ".0.weight")) {
            return ExpertMatrices.rowsOf(r.experts(p + proj + "_exps.weight", cols, rows, n), n);
        }
        WeightMatrix[] each = new WeightMatrix[n];
        for (int e = 0; e < n; e++) each[e] = r.matrix(p + proj + "." + e + ".weight", cols, rows);
        return new ExpertMatrices(null, each);
    }

    /** Reads tensors of one artifact with their shapes checked, and remembers which it read. */
    private static final class Reader {
        final GgufArtifact artifact;
        private final java.util.Set<String> read = new java.util.HashSet<>();

        Reader(GgufArtifact artifact) {
            this.artifact = artifact;
        }

        boolean has(String name) {
            return artifact.tensorOrNull(name) != null;
        }

        WeightMatrix matrix(String name, int cols, int rows) {
            TensorInfo t = artifact.tensor(name);
            WeightMatrix m = WeightMatrix.of(t);
            if (m.cols() != cols || m.rows() != rows) {
                throw new IllegalArgumentException(artifact.path() + ": tensor '" + name + "' has shape " + t.shapeString()
                        + ", expected [" + cols + ", " + rows + "]");
            }
            read.add(name);
            return m;
        }

        /** A 3-D tensor {@code [cols, rows, n]} as one matrix of {@code n·rows} rows: expert {@code e}'s come e-th. */
        WeightMatrix experts(String name, int cols, int rows, int n) {
            TensorInfo t = artifact.tensor(name);
            long[] s = t.shape();
            if (s.length != 3 || s[0] != cols || s[1] != rows || s[2] != n) {
                throw new IllegalArgumentException(artifact.path() + ": tensor '" + name + "' has shape " + t.shapeString()
                        + ", expected [" + cols + ", " + rows + ", " + n + "]");
            }
            WeightMatrix m = WeightMatrix.of(t);
            read.add(name);
            return m;
        }

        float[] vector(String name, int n) {
            TensorInfo t = artifact.tensor(name);
            if (t.elementCount() != n) {
                throw new IllegalArgumentException(artifact.path() + ": tensor '" + name + "' has " + t.elementCount()
                        + " values, expected " + n);
            }
            if (t.type().isQuantized() || !RowDecoder.supports(t.type())) {
                throw new IllegalArgumentException(artifact.path() + ": tensor '" + name + "' has type " + t.type()
                        + ", expected F32, F16 or BF16");
            }
            float[] v = new float[n];
            RowDecoder.decode(t.type(), t.data(), 0, v, 0, n);
            read.add(name);
            return v;
        }

        float[] optionalVector(String name, int n) {
            return has(name) ? vector(name, n) : null;
        }

        /**
         * Fails on a tensor of blocks {@code [first, end)} that was not read (an output-projection
         * bias, an FFN bias, a norm of a variant dgr does not run): computing without it would give
         * wrong logits without a word, and llama.cpp refuses such a file too (its loader counts
         * every tensor).
         */
        void refuseUnreadBlocks(LlamaConfig c, int first, int end) {
            for (TensorInfo t : artifact.tensors()) {
                String n = t.name();
                int dot = n.indexOf('.', 4);
                if (!n.startsWith("blk.") || dot <= 4 || !n.substring(4, dot).chars().allMatch(Character::isDigit)) continue;
                int layer = Integer.parseInt(n.substring(4, dot));
                if (layer >= first && layer < end && !read.contains(n)) {
                    throw new IllegalArgumentException(artifact.path() + ": tensor '" + n + "' is not part of the "
                            + c.architecture() + " graph dgr runs; computing without it would give wrong results");
                }
            }
        }
    }
}
