package dgr.engine.llama;

import dgr.engine.Batch;
import dgr.engine.BoundarySchema;
import dgr.engine.Engine;
import dgr.engine.EngineFeatures;
import dgr.engine.EngineId;
import dgr.engine.EngineOptions;
import dgr.engine.ForwardResult;
import dgr.engine.ModelInfo;
import dgr.engine.Recipe;
import dgr.engine.StateLayout;
import dgr.engine.StateSlot;
import dgr.engine.kernel.Kernels;
import dgr.engine.kernel.RowDecoder;
import dgr.engine.kernel.Scratch;
import dgr.engine.kernel.WeightMatrix;
import dgr.engine.kernel.WorkerPool;
import dgr.gguf.GgufArtifact;
import dgr.gguf.TensorInfo;

/**
 * The dense llama forward pass over a layer span, for a batch of rows from many sessions.
 *
 * <p>Per layer: RMSNorm and Q/K/V for all rows (one batched matmul each), RoPE, K/V appended to
 * each row's slot, then attention per (row, K/V head) over that row's own slot positions 0..pos
 * (the window's last positions on sliding-window layers), output projection, SwiGLU FFN (or a
 * mixture of experts: {@link #experts}), residuals. Matmuls are split across workers by output rows
 * only, attention by (row, K/V head) items, and every per-row step (norm, RoPE, softmax) runs the
 * same sequence for a row whatever else is in the batch, so results are batch-invariant to the bit.
 * All buffers are sized for {@code maxRows} at construction; a forward pass allocates nothing
 * beyond new K/V pages when a slot grows past its pages.
 */
public final class LlamaEngine implements Engine {
    private final GgufArtifact artifact;
    private final LlamaConfig cfg;
    private final LlamaWeights w;
    private final EngineId id;
    private final Recipe recipe;
    private final KvLayout layout;
    private final BoundarySchema boundary;
    private final ModelInfo info;
    private final EngineFeatures features;
    private final Kernels kernels;
    private final WorkerPool pool;
    private final Scratch[] scratch;
    private final Rope rope;
    /** The rotation of sliding-window layers (Gemma 3: base 10⁴, unscaled; Gemma 2: the same as the others); null without them. */
    private final Rope localRope;
    private final KvPagePool pages;
    private final int first, end, context, maxRows;
    /** Floats between two query heads' scores in {@link Scratch#scores}. */
    private final int scoreStride;
    private final boolean firstStage, lastStage;

    // Activations, [row][width] row-major, sized for maxRows.
    private final float[] x, xb, q, k, v, att, tmp, gate, up, hb, outIn, logits;
    /** The attention branch's output kept beside the FFN's in parallel blocks (Phi-2); null otherwise. */
    private final float[] attnOut;
    private final int[] outIndex;
    /**
     * Mixture-of-experts work ({@link #experts}), null for a dense model: router scores per row,
     * each row's chosen experts and weights ({@code used} per row), the rows gathered for one expert
     * and their outputs, and every (row, choice)'s output before the weighted sum.
     */
    private final float[] routerScores, routerProbs, routerSelection, expertWeights, choiceOut, sharedScores, sharedOut;
    private final int[] chosen;
    private final ExpertJob expertJob;
    private final KvSlot[] rowSlot;
    private final int[] rowPos;
    private int nRows, nOut;
    private long stamp;
    private boolean closed;

    /**
     * Latent attention's buffers ({@link #mlaQkv}), null for other models: the query before its
     * up projection, the heads' full queries, the latent and rotated key, the queries absorbed into
     * the latent, each head's input to a per-head projection, and the heads' values.
     */
    private final float[] mlaQa, mlaQ, mlaKv, mlaAbsorbed, mlaValues;
    private final float[][] mlaHeadIn;
    private final HeadJob headJob = new HeadJob();
    private final MatJob matJob = new MatJob();
    /** Repacked weight copies ({@link Kernels#prepare}); freed on close. */
    private final java.lang.foreign.Arena weightsArena;
    private final AttentionJob attentionJob = new AttentionJob();
    private final TiledAttention tiled;
    private final Result result = new Result();

    public LlamaEngine(GgufArtifact artifact, String artifactSha256, EngineOptions opts) {
        this.artifact = artifact;
        this.cfg = LlamaConfig.from(artifact);
        this.first = opts.firstLayer();
        this.end = opts.endLayer() < 0 ? cfg.nLayers() : opts.endLayer();
        if (first < 0 || first >= end || end > cfg.nLayers()) {
            throw new IllegalArgumentException("layer span [" + first + ", " + end + ") is not inside the model's "
                    + cfg.nLayers() + " layers");
        }
        if (opts.maxRows() < 1) throw new IllegalArgumentException("maxRows must be >= 1, got " + opts.maxRows());
        this.firstStage = first == 0;
        this.lastStage = end == cfg.nLayers();
        this.context = opts.contextLength() > 0 ? opts.contextLength()
                : Math.min(cfg.trainContext(), EngineOptions.DEFAULT_CONTEXT_CAP);
        if (cfg.variant().learnedPositions() && context > cfg.trainContext()) {
            throw new IllegalArgumentException(artifact.path() + ": " + cfg.architecture() + " has learned positions for "
                    + cfg.trainContext() + " tokens (context_length); a context of " + context + " is longer");
        }
        this.maxRows = opts.maxRows();
        EngineOptions.Kind kind = opts.kind() == EngineOptions.Kind.AUTO ? EngineOptions.Kind.preferred() : opts.kind();
        this.kernels = switch (kind) {
            case AUTO, SIMD -> Kernels.of(true);
            case SCALAR -> Kernels.of(false);
            case Q8 -> new dgr.engine.kernel.Q8Kernels();
        };
        this.weightsArena = java.lang.foreign.Arena.ofShared();
        try {
            this.w = LlamaWeights.load(artifact, cfg, first, end).prepared(kernels, weightsArena);
        } catch (RuntimeException | Error ex) {
            weightsArena.close();
            throw ex;
        }
        // The id names the kernels that run (java-simd/1, java-scalar/1, java-q8/1), so it cannot disagree with them.
        this.id = new EngineId(kernels.name(), 1);
        LlamaConfig.SlidingWindow sw = cfg.slidingWindow();
        this.layout = cfg.mla() != null ? KvLayout.latent(end - first, cfg.headDim())
                : sw == null ? new KvLayout(end - first, cfg.nHeadKv(), cfg.headDim())
                : new KvLayout(end - first, cfg.nHeadKv(), cfg.headDim(), sw.window(), sw.pattern(), first);
        this.boundary = new BoundarySchema(cfg.architecture(), cfg.nEmbd(), "f32", 1);
        this.recipe = new Recipe(artifactSha256, cfg.architecture(), first, end, cfg.nLayers(), context, "f32",
                cfg.rope().forContext(context).canonical());
        long params = 0;
        for (TensorInfo t : artifact.tensors()) params += t.elementCount();
        this.info = new ModelInfo(cfg.architecture(), artifact.metadata().getString("general.name", ""),
                cfg.vocabSize(), context, cfg.nLayers(), cfg.nEmbd(), params, artifact.metadata());
        int threads = Math.max(1, opts.threads());
        this.features = new EngineFeatures(true, maxRows, threads);
        this.rope = new Rope(cfg.rope().forContext(context), context);
        this.localRope = cfg.slidingWindow() == null ? null : new Rope(cfg.slidingWindow().localRope(), context);
        this.pages = new KvPagePool(KvLayout.PAGE_TOKENS * cfg.kvDim());
        int e = cfg.nEmbd(), r = maxRows;
        x = new float[r * e];
        xb = new float[r * e];
        q = new float[r * cfg.qDim()];
        k = new float[r * cfg.kvDim()];
        v = new float[r * cfg.kvDim()];
        att = new float[r * cfg.qDim()];
        tmp = new float[r * e];
        attnOut = cfg.parallel() != LlamaVariant.Parallel.NONE ? new float[r * e] : null;
        LlamaConfig.Experts ex = cfg.experts();
        // A MoE model's FFN buffers hold one expert's rows, or the shared expert's.
        // Dense layers beside the experts' (DeepSeek's leading ones, Llama 4's interleaved ones) run nFf wide.
        boolean denseToo = ex != null && (ex.leadingDense() > 0 || ex.step() != 1);
        int ff = ex == null ? cfg.nFf() : Math.max(Math.max(ex.ff(), ex.sharedFf()), denseToo ? cfg.nFf() : 0);
        LlamaConfig.Mla mla = cfg.mla();
        int heads = cfg.nHead();
        mlaQa = mla == null || mla.qLoraRank() == 0 ? null : new float[r * mla.qLoraRank()];
        mlaQ = mla == null ? null : new float[r * heads * (mla.nope() + mla.rope())];
        mlaKv = mla == null ? null : new float[r * mla.stateDim()];
        mlaAbsorbed = mla == null ? null : new float[r * heads * mla.kvLoraRank()];
        mlaValues = mla == null ? null : new float[r * heads * mla.vHead()];
        mlaHeadIn = mla == null ? null : new float[heads][r * Math.max(mla.nope(), mla.kvLoraRank())];
        gate = new float[r * ff];
        up = new float[r * ff];
        hb = new float[r * ff];
        routerScores = ex == null ? null : new float[r * ex.count()];
        routerProbs = ex == null ? null : new float[ex.count()];
        routerSelection = ex == null ? null : new float[ex.count()];
        chosen = ex == null ? null : new int[r * ex.used()];
        expertWeights = ex == null ? null : new float[r * ex.used()];
        sharedScores = ex == null || !ex.sharedGated() ? null : new float[r];
        sharedOut = ex == null || ex.sharedFf() == 0 ? null : new float[r * e];
        expertJob = ex == null ? null : new ExpertJob(ex.count(), Math.min(ex.count(), r * ex.used()));
        choiceOut = ex == null ? null : new float[Math.multiplyExact(r * ex.used(), e)];
        outIn = lastStage ? new float[r * e] : null;
        logits = lastStage ? new float[Math.multiplyExact(r, cfg.vocabSize())] : null;
        outIndex = new int[r];
        rowSlot = new KvSlot[r];
        rowPos = new int[r];
        int maxCols = Math.max(Math.max(e, ff), cfg.qDim());
        scratch = new Scratch[threads];
        // Scores for every query head of one K/V head, 8 positions past the context for the last block.
        scoreStride = context + 8;
        for (int i = 0; i < threads; i++) scratch[i] = new Scratch(maxCols, cfg.nHead() / cfg.nHeadKv() * scoreStride);
        tiled = new TiledAttention(cfg, kernels, threads, r);
        this.pool = new WorkerPool(threads, "dgr-" + id.name());
    }

    public LlamaConfig config() { return cfg; }

    @Override public EngineId id() { return id; }
    @Override public EngineFeatures features() { return features; }
    @Override public Recipe recipe() { return recipe; }
    @Override public StateLayout stateLayout() { return layout; }
    @Override public BoundarySchema boundarySchema() { return boundary; }
    @Override public ModelInfo info() { return info; }

    @Override
    public StateSlot openSlot() {
        ensureOpen();
        return new KvSlot(this, layout, pages, context);
    }

    @Override
    public ForwardResult forward(Batch batch) {
        ensureOpen();
        validate(batch);
        int n = nRows = batch.size();
        int e = cfg.nEmbd();
        for (int r = 0; r < n; r++) {
            rowSlot[r].ensure(rowPos[r] + 1);
            if (firstStage) {
                RowDecoder.decodeRow(w.tokenEmbd(), batch.token(r), x, r * e);
                if (w.positionEmbd() != null) {
                    // GPT-2: the learned row of this position added to the token's (tmp is free until the first layer).
                    RowDecoder.decodeRow(w.positionEmbd(), rowPos[r], tmp, r * e);
                    for (int i = r * e; i < (r + 1) * e; i++) x[i] += tmp[i];
                }
                float es = cfg.multipliers().embedding();
                if (es != 1f) for (int i = r * e; i < (r + 1) * e; i++) x[i] *= es;
            } else {
                System.arraycopy(batch.boundary(), r * e, x, r * e, e);
            }
        }
        for (int l = 0; l < w.layers().length; l++) layer(l, w.layers()[l], n);
        for (int r = 0; r < n; r++) rowSlot[r].setLength(rowPos[r] + 1);
        nOut = 0;
        if (lastStage) {
            for (int r = 0; r < n; r++) {
                if (batch.wantsOutput(r)) {
                    norm(x, r * e, w.outputNorm(), w.biases().outputNorm(), outIn, nOut * e);
                    outIndex[r] = nOut++;
                } else {
                    outIndex[r] = -1;
                }
            }
            if (nOut > 0) matmul(w.output(), outIn, nOut, logits);
            addBiasRows(logits, nOut, w.biases().output());
            float ls = cfg.multipliers().logit();
            if (ls != 1f) {
                float inv = 1f / ls; // llama.cpp scales by the reciprocal
                for (int i = 0, end = nOut * cfg.vocabSize(); i < end; i++) logits[i] *= inv;
            }
            float cap = cfg.softcaps().logits();
            if (cap != 0f) {
                for (int i = 0, end = nOut * cfg.vocabSize(); i < end; i++) logits[i] = LlamaConfig.Softcaps.apply(logits[i], cap);
            }
        }
        return result;
    }

    private void layer(int l, LlamaWeights.Layer L, int n) {
        int qd = cfg.qDim();
        boolean local = cfg.isLocal(first + l); // the model's layer index: a stage starts at layer first
        boolean rotate = cfg.ropeAt(first + l);
        LlamaWeights.LayerBiases lb = L.biases();
        float[] in = preNorm(L.attnNorm(), lb.attnNorm(), n);
        if (L.mla() != null) {
            mlaQkv(l, L, in, n);
        } else {
            qkv(l, L, in, n, local, rotate);
        }
        attentionJob.layer = l;
        attentionJob.window = local ? cfg.slidingWindow() : null;
        attentionJob.layerSinks = L.sinks();
        if (L.mla() == null) tiled.plan(rowSlot, rowPos, n);
        pool.run(attentionJob);
        if (L.mla() != null) {
            // Each head's latent output (the first kvLoraRank of its state-wide slice) lifted to its values.
            LlamaConfig.Mla m = cfg.mla();
            int hd = cfg.headDim(), lr = m.kvLoraRank();
            for (int h = 0; h < cfg.nHead(); h++) {
                for (int r = 0; r < n; r++) System.arraycopy(att, r * qd + h * hd, mlaHeadIn[h], r * lr, lr);
            }
            headJob.set(n, L.mla().vb(), m.vHead(), mlaValues);
            pool.run(headJob);
        }
        matJob.set(n, false, L.wo(), L.mla() != null ? mlaValues : att, tmp, null, null, null, null, null, null);
        pool.run(matJob);
        finishLayer(L, lb, in, n);
    }

    /** Q, K and V of every row, with their biases, norms and rotation; K and V into the rows' slots. */
    private void qkv(int l, LlamaWeights.Layer L, float[] in, int n, boolean local, boolean rotate) {
        int qd = cfg.qDim(), kvd = cfg.kvDim(), hd = cfg.headDim();
        matJob.set(n, false, L.wq(), in, q, L.wk(), in, k, L.wv(), in, v);
        pool.run(matJob);
        for (int r = 0; r < n; r++) {
            addBias(q, r * qd, L.bq());
            addBias(k, r * kvd, L.bk());
            addBias(v, r * kvd, L.bv());
            boolean normAfter = cfg.variant().qkNormAfterRope();
            if (!normAfter) qkNorms(L, r);
            int pos = rowPos[r];
            if (rotate) {
                Rope ro = local ? localRope : rope;
                ro.apply(q, r * qd, cfg.nHead(), hd, pos);
                ro.apply(k, r * kvd, cfg.nHeadKv(), hd, pos);
            }
            if (normAfter) qkNorms(L, r);
            LlamaConfig.PositionTuning nr = cfg.tuning();
            if (nr != null && rotate && nr.qkNorm()) {
                // Llama 4's rotated layers: each head of Q and K RMS-normalised after the rotation, no weights.
                for (int o = 0; o < qd; o += hd) rmsNormUnweighted(q, r * qd + o, hd);
                for (int o = 0; o < kvd; o += hd) rmsNormUnweighted(k, r * kvd + o, hd);
            }
            if (nr != null && (!rotate || nr.everyLayer())) {
                // Llama 4's unrotated layers (Mistral 3's all): Q times the position's temperature (1 below its floor).
                float t = nr.temperature(pos);
                if (t != 1f) for (int i = r * qd; i < (r + 1) * qd; i++) q[i] *= t;
            }
            float[] kp = rowSlot[r].kPage(l, pos);
            for (int i = 0, kb = KvSlot.kBlock(pos, kvd) + pos % 8; i < kvd; i++) kp[kb + 8 * i] = k[r * kvd + i];
            System.arraycopy(v, r * kvd, rowSlot[r].vPage(l, pos), KvSlot.pageOffset(pos, kvd), kvd);
        }
    }

    /** Row {@code r}'s Q and K normalised where the layer has Q/K norms (before the rotation, or after it for Hunyuan). */
    private void qkNorms(LlamaWeights.Layer L, int r) {
        int qd = cfg.qDim(), kvd = cfg.kvDim(), hd = cfg.headDim();
        if (L.qNorm() != null && cfg.variant().layerNorm != null) {
            // StableLM 2 12B, Command R+: a LayerNorm over each head of Q and K, each head its own weights.
            for (int o = 0; o < qd; o += hd) layerNorm(q, r * qd + o, L.qNorm(), o, hd, null, q, r * qd + o);
            for (int o = 0; o < kvd; o += hd) layerNorm(k, r * kvd + o, L.kNorm(), o, hd, null, k, r * kvd + o);
        } else if (L.qNorm() != null) {
            // Qwen3 and Gemma 3 RMS-normalise every head of Q and K on its own (norms one head
            // wide); OLMo 2 the whole of Q and of K (norms as wide as Q and K).
            int qs = L.qNorm().length, ks = L.kNorm().length;
            for (int o = 0; o < qd; o += qs) rmsNorm(q, r * qd + o, L.qNorm(), q, r * qd + o);
            for (int o = 0; o < kvd; o += ks) rmsNorm(k, r * kvd + o, L.kNorm(), k, r * kvd + o);
        }
    }

    /**
     * Latent attention's queries and state, as llama.cpp's deepseek2 graph computes them: the
     * query (through its normed low-rank projection where the file has one), the latent
     * ({@code attn_kv_a_mqa}'s first {@code kvLoraRank} values, normed) and the rotated key (the
     * rest); each head's query becomes its unrotated part absorbed into the latent through its
     * {@code attn_k_b} rows, followed by its rotated part: one K/V head of {@code kvLoraRank + rope}
     * values that the attention reads as key and as value.
     */
    private void mlaQkv(int l, LlamaWeights.Layer L, float[] in, int n) {
        LlamaConfig.Mla m = cfg.mla();
        LlamaWeights.Mla w = L.mla();
        int heads = cfg.nHead(), qh = m.nope() + m.rope(), lr = m.kvLoraRank(), sd = m.stateDim(), qd = cfg.qDim();
        if (w.qa() != null) {
            matJob.set(n, false, w.qa(), in, mlaQa, w.kvA(), in, mlaKv, null, null, null);
            pool.run(matJob);
            for (int r = 0; r < n; r++) rmsNorm(mlaQa, r * m.qLoraRank(), w.qaNorm(), mlaQa, r * m.qLoraRank());
            matJob.set(n, false, w.qb(), mlaQa, mlaQ, null, null, null, null, null, null);
        } else {
            matJob.set(n, false, L.wq(), in, mlaQ, w.kvA(), in, mlaKv, null, null, null);
        }
        pool.run(matJob);
        for (int h = 0; h < heads; h++) {
            for (int r = 0; r < n; r++) System.arraycopy(mlaQ, (r * heads + h) * qh, mlaHeadIn[h], r * m.nope(), m.nope());
        }
        headJob.set(n, w.kb(), lr, mlaAbsorbed);
        pool.run(headJob);
        for (int r = 0; r < n; r++) {
            int pos = rowPos[r];
            for (int h = 0; h < heads; h++) {
                int qo = r * qd + h * sd;
                System.arraycopy(mlaAbsorbed, (r * heads + h) * lr, q, qo, lr);
                System.arraycopy(mlaQ, (r * heads + h) * qh + m.nope(), q, qo + lr, m.rope());
                rope.apply(q, qo + lr, 1, m.rope(), pos);
            }
            rmsNorm(mlaKv, r * sd, w.kvANorm(), k, r * sd);
            System.arraycopy(mlaKv, r * sd + lr, k, r * sd + lr, m.rope());
            rope.apply(k, r * sd + lr, 1, m.rope(), pos);
            float[] kp = rowSlot[r].kPage(l, pos);
            for (int i = 0, kb = KvSlot.kBlock(pos, sd) + pos % 8; i < sd; i++) kp[kb + 8 * i] = k[r * sd + i];
        }
    }

    /**
     * The attention's output projection is in {@code tmp}: its bias and norm, the FFN (on
     * {@code in}, the attention's normed input, where one norm feeds both branches), both residual adds.
     */
    private void finishLayer(LlamaWeights.Layer L, LlamaWeights.LayerBiases lb, float[] in, int n) {
        int e = cfg.nEmbd();
        addBiasRows(tmp, n, lb.attnOut());
        if (L.postAttnNorm() != null) for (int r = 0; r < n; r++) rmsNorm(tmp, r * e, L.postAttnNorm(), tmp, r * e);
        boolean parallel = cfg.parallel() != LlamaVariant.Parallel.NONE;
        if (parallel) {
            // Side by side, x + (attn + ffn) below: Phi-2's FFN reads the same normed input (still
            // in xb), GPT-NeoX's its own norm of the same x.
            System.arraycopy(tmp, 0, attnOut, 0, n * e);
            if (cfg.parallel() == LlamaVariant.Parallel.OWN_NORMS) in = preNorm(L.ffnNorm(), lb.ffnNorm(), n);
        } else {
            addResidual(n * e);
            in = preNorm(L.ffnNorm(), lb.ffnNorm(), n);
        }
        if (L.experts() != null) {
            experts(L.experts(), in, n);
        } else if (L.gate() == null) {
            plainFfn(L, lb, in, n);
        } else {
            matJob.set(n, true, L.gate(), in, gate, L.up(), in, up, null, null, null);
            pool.run(matJob);
            matJob.set(n, false, L.down(), hb, tmp, null, null, null, null, null, null);
            pool.run(matJob);
        }
        if (L.postFfnNorm() != null) for (int r = 0; r < n; r++) rmsNorm(tmp, r * e, L.postFfnNorm(), tmp, r * e);
        if (parallel) for (int i = 0; i < n * e; i++) tmp[i] = attnOut[i] + tmp[i];
        addResidual(n * e);
    }

    /**
     * The ungated FFN into {@code tmp}: {@code hb = act(up·in + b_up)} (GELU; Arcee's ReLU²), then
     * {@code down·hb + b_down}, each bias, where there is one, added to the rounded product as
     * llama.cpp adds it.
     */
    private void plainFfn(LlamaWeights.Layer L, LlamaWeights.LayerBiases lb, float[] in, int n) {
        matmul(L.up(), in, n, up);
        addBiasRows(up, n, lb.up());
        boolean gelu = cfg.variant().gelu;
        for (int i = 0, end = n * cfg.nFf(); i < end; i++) {
            // Arcee's ReLU², as ggml's relu then sqr: max(x, 0), then its square rounded.
            float a = Math.max(up[i], 0f);
            hb[i] = gelu ? gelu(up[i]) : a * a;
        }
        matmul(L.down(), hb, n, tmp);
        addBiasRows(tmp, n, lb.down());
    }

    /**
     * The mixture-of-experts FFN into {@code tmp}: router scores for all rows (one matmul), each
     * row's experts ({@link ExpertRouting}), then every chosen expert's rows gathered and run in
     * two pool passes for all experts together ({@link ExpertJob}: SwiGLU, then down), so each
     * expert's weights are read once per step whatever the batch; last, per row,
     * {@code w₀·y₀ + w₁·y₁ + …} in the row's choice order, each product rounded before the sum, as
     * llama.cpp multiplies and then adds. A row's outputs come from the same kernels and steps
     * however many rows share its experts, so the result is batch-invariant like the dense FFN.
     */
    private void experts(LlamaWeights.Experts w, float[] in, int n) {
        LlamaConfig.Experts ex = cfg.experts();
        int e = cfg.nEmbd(), used = ex.used(), count = ex.count();
        // The router and the shared expert's one-row gate read the same input: one pass for both.
        matJob.set(n, false, w.router, in, routerScores, w.sharedGateInp, w.sharedGateInp == null ? null : in, sharedScores,
                null, null, null);
        pool.run(matJob);
        if (w.routerBias != null) addBiasRows(routerScores, n, w.routerBias);
        for (int r = 0; r < n; r++) {
            ExpertRouting.route(routerScores, r * count, count, used, ex.normWeights(), ex.weightsScale(), ex.gating(),
                    w.selectionBias, ex.groups(), ex.groupsUsed(), routerProbs, routerSelection, chosen, expertWeights, r * used);
        }
        expertJob.gather(w, in, n * used, used, e, ex.ff(), ex.weightBeforeFfn() ? expertWeights : null);
        expertJob.phase(true);
        pool.run(expertJob);
        expertJob.phase(false);
        pool.run(expertJob);
        expertJob.scatter(choiceOut, e);
        // Llama 4's weights already scaled the experts' inputs: its outputs are summed as they are
        // (times 1, which is exact). Choice by choice, each element's sum is the same sequence.
        boolean weighed = !ex.weightBeforeFfn();
        for (int r = 0; r < n; r++) {
            int c0 = r * used, t0 = r * e;
            for (int k = 0; k < used; k++) {
                float wk = weighed ? expertWeights[c0 + k] : 1f;
                int y = (c0 + k) * e;
                if (k == 0) {
                    for (int i = 0; i < e; i++) tmp[t0 + i] = wk * choiceOut[y + i];
                } else {
                    for (int i = 0; i < e; i++) tmp[t0 + i] += wk * choiceOut[y + i];
                }
            }
        }
        if (w.sharedGate != null) shared(w, in, n);
    }

    /**
     * The shared expert added into {@code tmp}: a SwiGLU FFN every row runs. Qwen2-MoE's is scaled
     * by {@code sigmoid(g)} of the row's one-value gate {@code g}, computed as llama.cpp does,
     * {@code silu(g) / g} in float, then {@code tmp + ffn·s} (the product rounded first); Granite's
     * is added as it is.
     */
    private void shared(LlamaWeights.Experts w, float[] in, int n) {
        int e = cfg.nEmbd();
        matJob.set(n, true, w.sharedGate, in, gate, w.sharedUp, in, up, null, null, null);
        pool.run(matJob);
        matJob.set(n, false, w.sharedDown, hb, sharedOut, null, null, null, null, null, null);
        pool.run(matJob);
        for (int r = 0; r < n; r++) {
            if (w.sharedGateInp == null) {
                for (int i = r * e; i < (r + 1) * e; i++) tmp[i] += sharedOut[i];
                continue;
            }
            float g = sharedScores[r];
            float s = g / (1f + (float) Math.exp(-g)) / g;
            for (int i = r * e; i < (r + 1) * e; i++) tmp[i] += sharedOut[i] * s;
        }
    }

    /**
     * The chosen experts of one layer step, run together. Active expert {@code a} (the experts some
     * row chose, largest group first) has the rows that chose it gathered into buffers of its own; one
     * pass hands out chunks of every active expert's gate and up rows (SwiGLU follows per chunk),
     * the next chunks of their down rows: two pool dispatches per layer, not two per expert, and
     * workers claim chunks from one counter, so a small expert never leaves a worker idle. Buffers
     * grow to the largest group their slot has seen and are then kept (no allocation per token).
     */
    private final class ExpertJob implements WorkerPool.Job {
        private final int[] expertOf, rowsOf, filled;
        /** Per expert: rows that chose it this step, and its slot. */
        private final int[] groupSize, slotOf;
        /** For each (row, choice) of the step, in order: its active expert, and its row in that expert's group. */
        private final int[] choiceActive, choiceRow;
        private final float[][] in, gate, up, hb, out;
        private final java.util.concurrent.atomic.AtomicInteger next = new java.util.concurrent.atomic.AtomicInteger();
        private LlamaWeights.Experts w;
        private int active, choices, ff, chunkRows, perExpert, chunks;
        private boolean swigluPass;
        /** Counts down from -1 per pass: distinct from every MatJob epoch (which count up from 1), so prepared inputs are never reused across passes. */
        private long epoch;

        ExpertJob(int count, int maxActive) {
            expertOf = new int[maxActive];
            rowsOf = new int[maxActive];
            filled = new int[maxActive];
            groupSize = new int[count];
            slotOf = new int[count];
            choiceActive = new int[maxRows * cfg.experts().used()];
            choiceRow = new int[choiceActive.length];
            in = new float[maxActive][];
            gate = new float[maxActive][];
            up = new float[maxActive][];
            hb = new float[maxActive][];
            out = new float[maxActive][];
        }

        /**
         * Groups the step's {@code choices} (row, choice) pairs by expert, copying each row's input
         * into its expert's buffers. Active experts take slots largest group first (the lower
         * index first among equals): slot {@code a} then never holds more than
         * {@code choices / (a + 1)} rows, so the slots' buffers together stay within about
         * {@code maxRows · used · ln(count)} rows however the routing moves, and the pass hands out
         * the biggest experts' chunks first, which evens the workers' ends.
         */
        /** Bytes in the per-expert gather buffers: each slot's grows to the largest group it has held, then stays. */
        long bytesHeld() {
            long floats = 0;
            for (float[][] slots : new float[][][] {in, gate, up, hb, out}) {
                for (float[] a : slots) floats += a == null ? 0 : a.length;
            }
            return 4 * floats + 4L * (expertOf.length + rowsOf.length + filled.length + groupSize.length + slotOf.length
                    + choiceActive.length + choiceRow.length);
        }

        /**
         * Groups the step's (row, choice) pairs by expert and copies each pair's input row in; with
         * {@code inputWeights} (Llama 4) each copy is the row times its choice's weight, rounded per value as ggml multiplies.
         */
        void gather(LlamaWeights.Experts w, float[] x, int choices, int used, int e, int ff, float[] inputWeights) {
            this.w = w;
            this.ff = ff;
            this.choices = choices;
            int count = w.gate.length;
            java.util.Arrays.fill(groupSize, 0);
            for (int c = 0; c < choices; c++) groupSize[chosen[c]]++;
            active = 0;
            for (int ex = 0; ex < count; ex++) {
                if (groupSize[ex] == 0) continue;
                int a = active++;
                while (a > 0 && groupSize[expertOf[a - 1]] < groupSize[ex]) {
                    expertOf[a] = expertOf[a - 1];
                    a--;
                }
                expertOf[a] = ex;
            }
            for (int a = 0; a < active; a++) {
                int ex = expertOf[a], m = groupSize[ex];
                rowsOf[a] = m;
                slotOf[ex] = a;
                filled[a] = 0;
                in[a] = grow(in[a], m * e);
                out[a] = grow(out[a], m * e);
                gate[a] = grow(gate[a], m * ff);
                up[a] = grow(up[a], m * ff);
                hb[a] = grow(hb[a], m * ff);
            }
            for (int c = 0; c < choices; c++) {
                int a = slotOf[chosen[c]], m = filled[a]++;
                if (inputWeights == null) {
                    System.arraycopy(x, (c / used) * e, in[a], m * e, e);
                } else {
                    float wc = inputWeights[c];
                    for (int i = 0, s = (c / used) * e, d = m * e; i < e; i++) in[a][d + i] = x[s + i] * wc;
                }
                choiceActive[c] = a;
                choiceRow[c] = m;
            }
        }

        /** Each (row, choice)'s down output into {@code dst}, {@code e} floats per pair, in pair order. */
        void scatter(float[] dst, int e) {
            for (int c = 0; c < choices; c++) System.arraycopy(out[choiceActive[c]], choiceRow[c] * e, dst, c * e, e);
        }

        /** Sets up the SwiGLU pass (gate and up rows) or the down pass for the pool's next run. */
        void phase(boolean swiglu) {
            swigluPass = swiglu;
            WeightMatrix m = swiglu ? w.gate[0] : w.down[0];
            chunkRows = expertChunkRows(m);
            perExpert = (m.rows() + chunkRows - 1) / chunkRows;
            chunks = active * perExpert;
            next.set(0);
            epoch--;
        }

        @Override
        public void run(int worker, int workers) {
            Scratch s = scratch[worker];
            s.epoch = epoch;
            int rows = swigluPass ? ff : cfg.nEmbd();
            for (int c = next.getAndIncrement(); c < chunks; c = next.getAndIncrement()) {
                int a = c / perExpert, x = expertOf[a], m = rowsOf[a];
                int o0 = (c % perExpert) * chunkRows, o1 = Math.min(rows, o0 + chunkRows);
                if (swigluPass) {
                    kernels.matmul(w.gate[x], in[a], m, gate[a], o0, o1, s);
                    kernels.matmul(w.up[x], in[a], m, up[a], o0, o1, s);
                    if (w.gateBias != null) {
                        // gpt-oss: each expert's biases, then OpenAI's clamped SwiGLU.
                        addBiasRange(gate[a], m, ff, o0, o1, w.gateBias[x]);
                        addBiasRange(up[a], m, ff, o0, o1, w.upBias[x]);
                        swigluOai(gate[a], up[a], hb[a], m, ff, o0, o1);
                    } else {
                        swiglu(cfg.variant().gelu, gate[a], up[a], hb[a], m, ff, o0, o1);
                    }
                } else {
                    kernels.matmul(w.down[x], hb[a], m, out[a], o0, o1, s);
                    if (w.downBias != null) addBiasRange(out[a], m, rows, o0, o1, w.downBias[x]);
                }
            }
        }
    }

    /**
     * Output rows per claim in an expert pass: about 144 KiB of weights, as {@link #chunkRows}, but
     * without its eighth-of-the-matrix cap: the pass holds every chosen expert's rows, so workers
     * share it anyway, and an expert's matrix is small (a 36 KiB claim streamed too little at once).
     */
    static int expertChunkRows(WeightMatrix w) {
        return (int) Math.min(w.rows(), Math.max(16, (144L << 10) / w.rowBytes()) & ~15);
    }

    @Override
    public long workspaceBytes() {
        long floats = 0;
        for (float[] a : new float[][] {x, xb, q, k, v, att, tmp, gate, up, hb, outIn, logits, attnOut, routerScores, routerProbs,
                routerSelection, expertWeights, choiceOut, sharedScores, sharedOut, mlaQa, mlaQ, mlaKv, mlaAbsorbed, mlaValues}) {
            floats += a == null ? 0 : a.length;
        }
        if (mlaHeadIn != null) for (float[] a : mlaHeadIn) floats += a == null ? 0 : a.length;
        long bytes = 4 * floats + 4L * ((outIndex == null ? 0 : outIndex.length) + (chosen == null ? 0 : chosen.length));
        if (expertJob != null) bytes += expertJob.bytesHeld();
        for (Scratch sc : scratch) bytes += sc.bytes();
        return bytes;
    }

    private static float[] grow(float[] a, int n) {
        return a != null && a.length >= n ? a : new float[n];
    }

    /**
     * A branch's input: xb = norm(x)·weight (+ bias, LayerNorm variants) for each row, or x itself
     * where the architecture has no pre-norm (OLMo 2).
     */
    private float[] preNorm(float[] weight, float[] bias, int n) {
        if (weight == null) return x;
        int e = cfg.nEmbd();
        for (int r = 0; r < n; r++) norm(x, r * e, weight, bias, xb, r * e);
        return xb;
    }

    /**
     * The variant's block norm: LayerNorm with its bias (StableLM, StarCoder2, Phi-2), else RMSNorm,
     * then its bias where there is one (Phi-3.5-MoE; ggml's mul then add).
     */
    private void norm(float[] in, int io, float[] weight, float[] bias, float[] out, int oo) {
        if (cfg.variant().layerNorm != null) {
            layerNorm(in, io, weight, bias, out, oo);
        } else {
            rmsNorm(in, io, weight, out, oo);
            if (bias != null) for (int i = 0; i < bias.length; i++) out[oo + i] += bias[i];
        }
    }

    /**
     * out = (x − mean) / sqrt(var + eps) · weight (+ bias where there is one), as ggml's {@code norm} then mul and add:
     * the mean and the variance summed left to right in double, each step after rounded to float.
     */
    private void layerNorm(float[] in, int io, float[] weight, float[] bias, float[] out, int oo) {
        layerNorm(in, io, weight, 0, weight.length, bias, out, oo);
    }

    /** LayerNorm of {@code in[io .. io+e)} with {@code weight[wo .. wo+e)} (and {@code bias[0 .. e)} where given). */
    private void layerNorm(float[] in, int io, float[] weight, int wo, int e, float[] bias, float[] out, int oo) {
        double sum = 0;
        for (int i = 0; i < e; i++) sum += in[io + i];
        float mean = (float) (sum / e);
        double ss = 0;
        for (int i = 0; i < e; i++) {
            float d = in[io + i] - mean;
            ss += (double) d * d;
        }
        float scale = (float) (1.0 / Math.sqrt(ss / e + cfg.rmsEps()));
        if (bias == null) {
            for (int i = 0; i < e; i++) out[oo + i] = (in[io + i] - mean) * scale * weight[wo + i];
        } else {
            for (int i = 0; i < e; i++) out[oo + i] = (in[io + i] - mean) * scale * weight[wo + i] + bias[i];
        }
    }

    /** x += tmp, the branch output first scaled by Granite's residual multiplier where there is one. */
    private void addResidual(int len) {
        float rs = cfg.multipliers().residual();
        if (rs == 1f) {
            for (int i = 0; i < len; i++) x[i] += tmp[i];
        } else {
            for (int i = 0; i < len; i++) x[i] += tmp[i] * rs;
        }
    }

    private void matmul(WeightMatrix m, float[] in, int n, float[] out) {
        matJob.set(n, false, m, in, out, null, null, null, null, null, null);
        pool.run(matJob);
    }

    /** out = x / sqrt(mean(x²) + eps) · weight, summing squares left to right in double. */
    private void rmsNorm(float[] in, int io, float[] weight, float[] out, int oo) {
        int e = weight.length;
        double ss = 0;
        for (int i = 0; i < e; i++) ss += (double) in[io + i] * in[io + i];
        float scale = (float) (1.0 / Math.sqrt(ss / e + cfg.rmsEps()));
        for (int i = 0; i < e; i++) out[oo + i] = in[io + i] * scale * weight[i];
    }

    /** x / sqrt(mean(x²) + eps) in place over {@code a[o .. o+e)}: ggml's {@code rms_norm} with no weight after it. */
    private void rmsNormUnweighted(float[] a, int o, int e) {
        double ss = 0;
        for (int i = 0; i < e; i++) ss += (double) a[o + i] * a[o + i];
        float scale = (float) (1.0 / Math.sqrt(ss / e + cfg.rmsEps()));
        for (int i = 0; i < e; i++) a[o + i] = a[o + i] * scale;
    }

    /** {@code bias} added to each of the first {@code rows} rows of {@code a} (rows as wide as the bias); nothing where it is null. */
    private static void addBiasRows(float[] a, int rows, float[] bias) {
        if (bias != null) for (int r = 0; r < rows; r++) addBias(a, r * bias.length, bias);
    }

    /** {@code bias} added to {@code a} from {@code off}; nothing where it is null. */
    private static void addBias(float[] a, int off, float[] bias) {
        if (bias == null) return;
        for (int i = 0; i < bias.length; i++) a[off + i] += bias[i];
    }

    /** Checks every row before any slot is touched (Engine contract). */
    private void validate(Batch batch) {
        int n = batch.size();
        if (n > maxRows) throw new IllegalArgumentException("batch has " + n + " rows, engine takes at most " + maxRows);
        if (!firstStage && batch.boundaryWidth() != cfg.nEmbd()) {
            throw new IllegalArgumentException("boundary rows are " + batch.boundaryWidth() + " wide, stage expects "
                    + cfg.nEmbd() + " (" + boundary.id() + ")");
        }
        long s = ++stamp;
        KvSlot prev = null;
        int expected = 0;
        for (int r = 0; r < n; r++) {
            StateSlot ss = batch.slot(r);
            if (!(ss instanceof KvSlot slot) || slot.owner() != this) {
                throw new IllegalArgumentException("row " + r + ": state slot was not opened by this engine");
            }
            if (slot.isClosed()) throw new IllegalArgumentException("row " + r + ": state slot is closed");
            if (slot != prev) {
                if (slot.batchStamp == s) {
                    throw new IllegalArgumentException("row " + r + ": rows of one session must be consecutive in a batch");
                }
                slot.batchStamp = s;
                expected = slot.length();
                prev = slot;
            }
            int pos = batch.position(r);
            if (pos != expected) {
                throw new IllegalArgumentException("row " + r + ": position " + pos + " but the session's next position is "
                        + expected + " (slot length " + slot.length() + ")");
            }
            if (pos >= context) {
                throw new IllegalArgumentException("row " + r + ": position " + pos + " is past the context length " + context);
            }
            if (firstStage) {
                int t = batch.token(r);
                if (t < 0 || t >= cfg.vocabSize()) {
                    throw new IllegalArgumentException("row " + r + ": token " + t + " is outside the vocabulary [0, "
                            + cfg.vocabSize() + ")");
                }
            }
            rowSlot[r] = slot;
            rowPos[r] = pos;
            expected++;
        }
    }

    private void ensureOpen() {
        if (closed) throw new IllegalStateException("engine is closed");
    }

    @Override
    public void close() {
        if (closed) return;
        closed = true;
        pool.close();
        weightsArena.close();
        artifact.close();
    }

    /**
     * Divides attention weights {@code sc[from, to)} by {@code sum}; a result below the smallest
     * normal float (a score more than ~87 under the head's maximum) becomes 0: as a subnormal it
     * would reach weightedV's FMAs, and an Intel core takes a microcode assist for each such FMA
     * (a 4096-position head 32× slower on the Sapphire Rapids-class VM of 2026-12-01). Its weight
     * is below 2^-126 of the largest, so no logit moves beyond float rounding.
     */
    static void normalize(float[] sc, int from, int to, float sum) {
        for (int t = from; t < to; t++) {
            float p = sc[t] / sum;
            sc[t] = p < Float.MIN_NORMAL ? 0f : p;
        }
    }

    /**
     * Output rows per claim for {@code w}: about 144 KiB of weights, 16 to 256 rows, and at most
     * an eighth of the matrix so both workers always share it (which also keeps small test models
     * split across workers). Bigger claims than the former fixed 32 rows cut the per-claim
     * overhead at batch 1 (paired runs in one JVM on llama-1b Q4_0: median 14.9 against 13.8
     * tok/s), while a claim still fits L2 so batch groups after the first reread it from there
     * (2048 columns: 128 rows; 8192: 32). A multiple of 16, so claims start at the row groups of
     * the 8-bit layouts ({@link dgr.engine.kernel.WeightLayout#rowGroup}; a claim that cut one
     * would have both workers compute its rows, each writing its own).
     */
    static int chunkRows(WeightMatrix w) {
        return (int) Math.max(16, Math.min(Math.min(256, w.rows() / 8), (144L << 10) / w.rowBytes()) & ~15);
    }

    /**
     * One small matrix per attention head, each over its own input: head {@code h} multiplies
     * rows {@code [h·rowsPerHead, (h+1)·rowsPerHead)} of {@code m} with {@code mlaHeadIn[h]}
     * ({@code n} rows), and the outputs land where a whole-matrix product would put them, so each
     * row's heads follow each other in {@code out}. Heads are claimed one at a time; every output
     * element is one kernel sequence, so which worker runs a head changes no bit.
     */
    private final class HeadJob implements WorkerPool.Job {
        private final java.util.concurrent.atomic.AtomicInteger next = new java.util.concurrent.atomic.AtomicInteger();
        private int n, rowsPerHead;
        private WeightMatrix m;
        private float[] out;
        /** Counts up from a value far from MatJob's (up from 1) and ExpertJob's (down from -1), so no prepared input is reused. */
        private long epoch = Long.MIN_VALUE / 2;

        void set(int n, WeightMatrix m, int rowsPerHead, float[] out) {
            this.n = n;
            this.m = m;
            this.rowsPerHead = rowsPerHead;
            this.out = out;
            epoch++;
            next.set(0);
        }

        @Override
        public void run(int worker, int workers) {
            Scratch s = scratch[worker];
            s.epoch = epoch;
            for (int h = next.getAndIncrement(); h < cfg.nHead(); h = next.getAndIncrement()) {
                kernels.matmul(m, mlaHeadIn[h], n, out, h * rowsPerHead, (h + 1) * rowsPerHead, s);
            }
        }
    }

    /**
     * Up to three matmuls over the same rows. Output rows are handed out in chunks of
     * {@link #chunkRows}, claimed one at a time rather than as fixed shares: on a machine shared
     * with other work one worker is often descheduled, and the other then takes over its rows
     * instead of waiting. Which worker computes a row never changes its bits (each output element
     * is one kernel sequence), so batch invariance holds.
     */
    private final class MatJob implements WorkerPool.Job {
        private int n;
        private boolean swiglu;
        private final WeightMatrix[] m = new WeightMatrix[3];
        private final float[][] in = new float[3][];
        private final float[][] out = new float[3][];
        private final int[] firstChunk = new int[4];
        private final int[] chunkRows = new int[3];
        /**
         * Chunks are split into one contiguous segment per worker; a worker claims from its own
         * segment first and then from the others', so each streams contiguous weights while a
         * descheduled worker's rows are still taken over.
         */
        private java.util.concurrent.atomic.AtomicIntegerArray cursor; // one per worker, made on first use
        /** Segment ends: written in {@link #set} before the pool publishes the job, then only read. */
        private int[] segEnd;

        private int claim(int worker) {
            int ws = segEnd.length;
            for (int k = 0; k < ws; k++) {
                int seg = (worker + k) % ws;
                if (cursor.get(seg) >= segEnd[seg]) continue;
                int c = cursor.getAndIncrement(seg);
                if (c < segEnd[seg]) return c;
            }
            return -1;
        }
        /** Bumped per job: inputs may have been rewritten, so kernels redo per-input work (Scratch#epoch). */
        private long epoch;

        void set(int n, boolean swiglu, WeightMatrix m0, float[] i0, float[] o0, WeightMatrix m1, float[] i1, float[] o1,
                 WeightMatrix m2, float[] i2, float[] o2) {
            this.n = n;
            this.swiglu = swiglu;
            epoch++;
            m[0] = m0; in[0] = i0; out[0] = o0;
            m[1] = m1; in[1] = i1; out[1] = o1;
            m[2] = m2; in[2] = i2; out[2] = o2;
            // Gate and up are claimed together (one chunk = the same rows of both) so SwiGLU can follow at once.
            int parts = swiglu ? 1 : 3;
            firstChunk[0] = 0;
            for (int j = 0; j < 3; j++) {
                chunkRows[j] = m[j] == null ? 1 : chunkRows(m[j]);
                int c = j < parts && m[j] != null ? (m[j].rows() + chunkRows[j] - 1) / chunkRows[j] : 0;
                firstChunk[j + 1] = firstChunk[j] + c;
            }
            int total = firstChunk[3], ws = scratch.length;
            if (cursor == null) {
                cursor = new java.util.concurrent.atomic.AtomicIntegerArray(ws);
                segEnd = new int[ws];
            }
            for (int w = 0; w < ws; w++) {
                cursor.set(w, (int) ((long) total * w / ws));
                segEnd[w] = (int) ((long) total * (w + 1) / ws);
            }
        }

        @Override
        public void run(int worker, int workers) {
            Scratch s = scratch[worker];
            s.epoch = epoch;
            for (int c = claim(worker); c >= 0; c = claim(worker)) {
                int j = c < firstChunk[1] ? 0 : c < firstChunk[2] ? 1 : 2;
                int rows = m[j].rows(), o0 = (c - firstChunk[j]) * chunkRows[j], o1 = Math.min(rows, o0 + chunkRows[j]);
                kernels.matmul(m[j], in[j], n, out[j], o0, o1, s);
                if (swiglu) {
                    kernels.matmul(m[1], in[1], n, out[1], o0, o1, s);
                    swiglu(cfg.variant().gelu, gate, up, hb, n, rows, o0, o1);
                }
            }
        }

    }

    /**
     * hb = silu(gate) · up on output rows [o0, o1) of each of {@code n} batch rows ({@code rows}
     * per batch row); Gemma's gelu(gate) · up, with the tanh form of GELU that llama.cpp's
     * {@code ggml_gelu} computes (in double here; ggml reads it from an f16 table).
     */
    private static void swiglu(boolean gelu, float[] gate, float[] up, float[] hb, int n, int rows, int o0, int o1) {
        for (int b = 0; b < n; b++) {
            for (int o = b * rows + o0, e = b * rows + o1; o < e; o++) {
                hb[o] = (gelu ? gelu(gate[o]) : silu(gate[o])) * up[o];
            }
        }
    }

    /** Adds {@code bias[o]} to output rows {@code [o0, o1)} of each of {@code n} batch rows ({@code rows} per batch row). */
    private static void addBiasRange(float[] a, int n, int rows, int o0, int o1, float[] bias) {
        for (int b = 0; b < n; b++) {
            for (int o = o0; o < o1; o++) a[b * rows + o] += bias[o];
        }
    }

    /** gpt-oss's SwiGLU limit and sigmoid slope (constants in llama.cpp, not in the file). */
    private static final float OAI_LIMIT = 7f, OAI_ALPHA = 1.702f;

    /**
     * OpenAI's clamped SwiGLU as ggml's {@code swiglu_oai} computes it, in float:
     * {@code x = min(gate, 7)}, {@code y = clamp(up, −7, 7)}, {@code x / (1 + e^(−1.702·x)) · (y + 1)}.
     */
    private static void swigluOai(float[] gate, float[] up, float[] hb, int n, int rows, int o0, int o1) {
        for (int b = 0; b < n; b++) {
            for (int o = b * rows + o0, e = b * rows + o1; o < e; o++) {
                float x = Math.min(gate[o], OAI_LIMIT), y = Math.max(-OAI_LIMIT, Math.min(up[o], OAI_LIMIT));
                float glu = x / (1f + (float) Math.exp(OAI_ALPHA * -x));
                hb[o] = glu * (y + 1f);
            }
        }
    }

    private static final double SQRT_2_OVER_PI = Math.sqrt(2.0 / Math.PI);

    /** SiLU, {@code x·sigmoid(x)}, in double, rounded once. */
    private static float silu(float x) {
        double g = x;
        return (float) (g / (1.0 + Math.exp(-g)));
    }

    /** GELU, tanh form ({@code ggml_gelu}), in double, rounded once. */
    private static float gelu(float x) {
        double g = x;
        return (float) (0.5 * g * (1.0 + Math.tanh(SQRT_2_OVER_PI * (g + 0.044715 * g * g * g))));
    }

    /**
     * Causal attention for each (row, K/V head) over the row's own slot, all query heads that
     * share the K/V head together (grouped-query attention reads each K and V vector once for
     * them); with a {@code window} (sliding-window layers) over the last {@code window} positions
     * only, the row's own included; scores soft-capped where the model caps them (Gemma 2). Scores
     * come 8 positions at a time ({@link Kernels#scores8}), V is summed a page at a time
     * ({@link Kernels#weightedV}): each score and each output element is one fixed sequence over its
     * own inputs, whatever the batch.
     */
    private final class AttentionJob implements WorkerPool.Job {
        int layer;
        /** The layer's window or chunk (sliding-window and chunked layers), or null for all positions. */
        LlamaConfig.SlidingWindow window;
        /** The layer's sink logits, one per query head (gpt-oss), or null. */
        float[] layerSinks;

        @Override
        public void run(int worker, int workers) {
            if (cfg.mla() == null) {
                int items = tiled.items();
                for (int it = WorkerPool.from(items, worker, workers), e = WorkerPool.from(items, worker + 1, workers); it < e; it++) {
                    tiled.item(it, worker, layer, window, layerSinks, q, att, rowSlot, rowPos);
                }
                return;
            }
            int items = nRows * cfg.nHeadKv();
            Scratch s = scratch[worker];
            for (int it = WorkerPool.from(items, worker, workers), e = WorkerPool.from(items, worker + 1, workers); it < e; it++) {
                group(it / cfg.nHeadKv(), it % cfg.nHeadKv(), s);
            }
        }

        private void group(int r, int kh, Scratch s) {
            int hd = cfg.headDim(), kvd = cfg.kvDim(), heads = cfg.nHead() / cfg.nHeadKv();
            int qo = r * cfg.qDim() + kh * heads * hd;
            int pos = rowPos[r];
            KvSlot slot = rowSlot[r];
            float[] sc = s.scores;
            int stride = scoreStride;
            float scale = cfg.multipliers().attentionScale(hd), cap = cfg.softcaps().attention();
            int t0 = window != null ? window.start(pos) : 0;
            for (int tb = t0 - t0 % 8; tb <= pos; tb += 8) {
                kernels.scores8(q, qo, heads, hd, slot.kPage(layer, tb), KvSlot.kBlock(tb, kvd) + kh * hd * 8, sc, tb, stride);
            }
            float[] sinks = layerSinks;
            for (int g = 0; g < heads; g++) {
                int so = g * stride;
                float max = Float.NEGATIVE_INFINITY;
                for (int t = t0; t <= pos; t++) {
                    float d = LlamaConfig.Softcaps.apply(sc[so + t] * scale, cap);
                    sc[so + t] = d;
                    if (d > max) max = d;
                }
                // gpt-oss: the head's sink logit joins the softmax (in the maximum and the sum) but weighs no value.
                float sink = sinks == null ? 0f : sinks[kh * heads + g];
                if (sinks != null && sink > max) max = sink;
                float sum = 0f;
                for (int t = t0; t <= pos; t++) {
                    float p = (float) Math.exp(sc[so + t] - max);
                    sc[so + t] = p;
                    sum += p;
                }
                if (sinks != null) sum += (float) Math.exp(sink - max);
                normalize(sc, so + t0, so + pos + 1, sum);
            }
            java.util.Arrays.fill(att, qo, qo + heads * hd, 0f);
            if (cfg.mla() != null) {
                // Latent attention: the values are the latent, the first kvLoraRank of each K page's rows.
                for (int ta = 0; ta <= pos; ta += KvLayout.PAGE_TOKENS) {
                    int tEnd = Math.min(pos + 1, ta + KvLayout.PAGE_TOKENS);
                    kernels.weightedK(sc, 0, stride, heads, ta, tEnd, slot.kPage(layer, ta), KvSlot.kBlock(ta, kvd), kvd,
                            cfg.mla().kvLoraRank(), att, qo, hd, s.lanes);
                }
                return;
            }
            for (int ta = t0; ta <= pos; ) {
                int tEnd = Math.min(pos + 1, (ta / KvLayout.PAGE_TOKENS + 1) * KvLayout.PAGE_TOKENS);
                kernels.weightedV(sc, 0, stride, heads, ta, tEnd, slot.vPage(layer, ta), KvSlot.pageOffset(ta, kvd) + kh * hd, kvd,
                        att, qo, hd);
                ta = tEnd;
            }
        }
    }

    /** Logits (last stage, compacted over rows that asked) or boundary rows (other stages). */
    private final class Result implements ForwardResult {
        @Override
        public float[] outputArray() { return lastStage ? logits : x; }

        @Override
        public int outputOffset(int row) {
            if (row < 0 || row >= nRows) throw new IndexOutOfBoundsException("row " + row + " of " + nRows);
            if (!lastStage) return row * cfg.nEmbd();
            if (outIndex[row] < 0) throw new IllegalArgumentException("row " + row + " did not ask for output");
            return outIndex[row] * cfg.vocabSize();
        }

        @Override
        public int outputWidth() { return lastStage ? cfg.vocabSize() : cfg.nEmbd(); }
    }
}
