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
import dgr.engine.kernel.WorkerPool;
import dgr.gguf.GgufArtifact;
import dgr.gguf.TensorInfo;
import java.lang.foreign.Arena;

import static dgr.engine.llama.Elementwise.addBias;
import static dgr.engine.llama.Elementwise.addBiasRows;

/**
 * The llama forward pass over a layer span, for a batch of rows from many sessions.
 *
 * <p>Per layer: the pre-norm and Q/K/V for all rows (one batched dispatch), RoPE, K/V appended to
 * each row's slot ({@link LatentAttention} in place of Q/K/V for DeepSeek-V2/V3), then
 * {@link Attention} per (row, K/V head) over that row's own slot positions 0..pos (the window's last
 * positions on sliding-window layers), output projection, the FFN (SwiGLU, ungated, or a mixture of
 * experts: {@link ExpertFfn}), residuals. Matmuls are split across workers by output rows only
 * ({@link Matmuls}), attention by (row, K/V head) items, and every per-row step (norm, RoPE,
 * softmax) runs the same sequence for a row whatever else is in the batch, so results are
 * batch-invariant to the bit. All buffers are sized for {@code maxRows} at construction; a forward
 * pass allocates nothing beyond new K/V pages when a slot grows past its pages.
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
    private final WorkerPool pool;
    private final Matmuls mats;
    private final Norms norms;
    private final Rope rope;
    /** The rotation of sliding-window layers (Gemma 3: base 10⁴, unscaled; Gemma 2: the same as the others); null without them. */
    private final Rope localRope;
    /** Free K and V pages (one pool where K and V have the same cache type). */
    private final KvPagePool kPages, vPages;
    private final int first, end, context, maxRows;
    private final boolean firstStage, lastStage;

    // Activations, [row][width] row-major, sized for maxRows.
    private final float[] x, xb, q, k, v, att, tmp, gate, up, hb, outIn, logits;
    /** The attention branch's output kept beside the FFN's in parallel blocks (Phi-2); null otherwise. */
    private final float[] attnOut;
    private final int[] outIndex;
    private final BatchRows rows;
    private final Attention attention;
    /** Null for a model without latent attention / without experts. */
    private final LatentAttention latent;
    private final ExpertFfn experts;
    private final RowSteps rowSteps;
    // The current layer's arguments to the per-row steps below, set before each dispatch.
    private int stepLayer;
    private LlamaWeights.Layer stepL;
    private boolean stepLocal, stepRotate;
    private float[] stepWeight, stepBias;
    private final RowSteps.Step normStep = this::normRow, qkvStep = this::qkvRow, residualStep = this::residualRow;
    private int nOut;
    private long stamp;
    private boolean closed;
    /** Repacked weight copies ({@link Kernels#prepare}); freed on close. */
    private final Arena weightsArena;
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
        Kernels kernels = switch (kind) {
            case AUTO, SIMD -> Kernels.of(true);
            case SCALAR -> Kernels.of(false);
            case Q8 -> new dgr.engine.kernel.Q8Kernels();
        };
        this.weightsArena = Arena.ofShared();
        try {
            this.w = LlamaWeights.load(artifact, cfg, first, end).prepared(kernels, weightsArena);
        } catch (RuntimeException | Error ex) {
            weightsArena.close();
            throw ex;
        }
        // The id names the kernels that run (java-simd, java-scalar, java-q8), so it cannot disagree with them.
        this.id = EngineId.of(kernels.name());
        LlamaConfig.SlidingWindow sw = cfg.slidingWindow();
        KvLayout f32Layout = cfg.mla() != null ? KvLayout.latent(end - first, cfg.headDim())
                : sw == null ? new KvLayout(end - first, cfg.nHeadKv(), cfg.headDim())
                : new KvLayout(end - first, cfg.nHeadKv(), cfg.headDim(), sw.window(), sw.pattern(), first);
        this.layout = f32Layout.withTypes(opts.cacheTypes());
        this.boundary = new BoundarySchema(cfg.architecture(), cfg.nEmbd(), "f32", 1);
        // The K/V cache types fix the numbers as much as the weights do: they are the recipe's state dtype.
        this.recipe = new Recipe(artifactSha256, cfg.architecture(), first, end, cfg.nLayers(), context, layout.types().canonical(),
                cfg.rope().forContext(context).canonical());
        long params = 0;
        for (TensorInfo t : artifact.tensors()) params += t.elementCount();
        this.info = new ModelInfo(cfg.architecture(), artifact.metadata().getString("general.name", ""),
                cfg.vocabSize(), context, cfg.nLayers(), cfg.nEmbd(), params, artifact.metadata());
        int threads = Math.max(1, opts.threads());
        this.features = new EngineFeatures(true, maxRows, threads);
        this.rope = new Rope(cfg.rope().forContext(context), context);
        this.localRope = cfg.slidingWindow() == null ? null : new Rope(cfg.slidingWindow().localRope(), context);
        this.kPages = new KvPagePool(KvCodec.of(layout.types().k(), cfg.kvDim(), cfg.headDim()));
        this.vPages = layout.types().v() == layout.types().k() ? kPages : new KvPagePool(KvCodec.of(layout.types().v(), cfg.kvDim(), cfg.headDim()));
        this.norms = new Norms(cfg);
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
        // Dense layers beside the experts' (DeepSeek's leading ones, Llama 4's interleaved ones) run nFf wide.
        boolean denseToo = ex != null && (ex.leadingDense() > 0 || ex.step() != 1);
        int denseFf = ex == null || denseToo ? cfg.nFf() : 0;
        gate = new float[r * denseFf];
        up = new float[r * denseFf];
        hb = new float[r * denseFf];
        outIn = lastStage ? new float[r * e] : null;
        logits = lastStage ? new float[Math.multiplyExact(r, cfg.vocabSize())] : null;
        outIndex = new int[r];
        rows = new BatchRows(r);
        // A decoded weight row is as wide as the widest matrix's input: the embedding, Q, or an FFN's (an expert's, the shared one's).
        int widestFf = ex == null ? cfg.nFf() : Math.max(Math.max(ex.ff(), ex.sharedFf()), denseFf);
        int maxCols = Math.max(Math.max(e, widestFf), cfg.qDim());
        Scratch[] scratch = new Scratch[threads];
        // Scores for every query head of one K/V head, 8 positions past the context for the last block.
        int scoreStride = context + 8;
        for (int i = 0; i < threads; i++) scratch[i] = new Scratch(maxCols, cfg.nHead() / cfg.nHeadKv() * scoreStride);
        this.pool = new WorkerPool(threads, "dgr-" + id.name());
        this.mats = new Matmuls(kernels, pool, scratch);
        this.attention = new Attention(cfg, mats, rows, q, att, scoreStride, kPages.codec(), vPages.codec());
        this.latent = cfg.mla() == null ? null : new LatentAttention(cfg, r, mats, norms, rope);
        this.experts = ex == null ? null : new ExpertFfn(cfg, r, mats);
        this.rowSteps = new RowSteps(pool);
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
        return new KvSlot(this, layout, kPages, vPages, context);
    }

    @Override
    public ForwardResult forward(Batch batch) {
        ensureOpen();
        validate(batch);
        int n = rows.n = batch.size();
        int e = cfg.nEmbd();
        for (int r = 0; r < n; r++) {
            rows.slot[r].ensure(rows.pos[r] + 1);
            if (firstStage) {
                RowDecoder.decodeRow(w.tokenEmbd(), batch.token(r), x, r * e);
                if (w.positionEmbd() != null) {
                    // GPT-2: the learned row of this position added to the token's (tmp is free until the first layer).
                    RowDecoder.decodeRow(w.positionEmbd(), rows.pos[r], tmp, r * e);
                    for (int i = r * e; i < (r + 1) * e; i++) x[i] += tmp[i];
                }
                float es = cfg.multipliers().embedding();
                if (es != 1f) for (int i = r * e; i < (r + 1) * e; i++) x[i] *= es;
            } else {
                System.arraycopy(batch.boundary(), r * e, x, r * e, e);
            }
        }
        for (int l = 0; l < w.layers().length; l++) layer(l, w.layers()[l], n);
        for (int r = 0; r < n; r++) rows.slot[r].setLength(rows.pos[r] + 1);
        nOut = 0;
        if (lastStage) {
            for (int r = 0; r < n; r++) {
                if (batch.wantsOutput(r)) {
                    norms.block(x, r * e, w.outputNorm(), w.biases().outputNorm(), outIn, nOut * e);
                    outIndex[r] = nOut++;
                } else {
                    outIndex[r] = -1;
                }
            }
            if (nOut > 0) mats.run(nOut, w.output(), outIn, logits);
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
        boolean local = cfg.isLocal(first + l); // the model's layer index: a stage starts at layer first
        boolean rotate = cfg.ropeAt(first + l);
        LlamaWeights.LayerBiases lb = L.biases();
        float[] in = preNorm(L.attnNorm(), lb.attnNorm(), n);
        if (L.mla() != null) {
            latent.queriesAndState(l, L, in, rows, q, k);
        } else {
            qkv(l, L, in, n, local, rotate);
        }
        attention.attend(l, local ? cfg.slidingWindow() : null, L.sinks());
        float[] heads = L.mla() != null ? latent.values(n, L.mla(), att) : att;
        mats.run(n, L.wo(), heads, tmp);
        finishLayer(L, lb, in, n);
    }

    /** Q, K and V of every row, with their biases, norms and rotation; K and V into the rows' slots. */
    private void qkv(int l, LlamaWeights.Layer L, float[] in, int n, boolean local, boolean rotate) {
        mats.begin(n).add(L.wq(), in, q).add(L.wk(), in, k).add(L.wv(), in, v).run();
        stepLayer = l;
        stepL = L;
        stepLocal = local;
        stepRotate = rotate;
        rowSteps.run(n, qkvStep);
        stepL = null;
    }

    /** Row {@code r}'s Q, K and V after their matrices (at the layer {@link #qkv} set): biases, norms, rotation, K and V stored. */
    private void qkvRow(int r) {
        int qd = cfg.qDim(), kvd = cfg.kvDim(), hd = cfg.headDim();
        LlamaWeights.Layer L = stepL;
        boolean rotate = stepRotate;
        addBias(q, r * qd, L.bq());
        addBias(k, r * kvd, L.bk());
        addBias(v, r * kvd, L.bv());
        boolean normAfter = cfg.variant().qkNormAfterRope();
        if (!normAfter) qkNorms(L, r);
        int pos = rows.pos[r];
        if (rotate) {
            Rope ro = stepLocal ? localRope : rope;
            ro.apply(q, r * qd, cfg.nHead(), hd, pos);
            ro.apply(k, r * kvd, cfg.nHeadKv(), hd, pos);
        }
        if (normAfter) qkNorms(L, r);
        LlamaConfig.PositionTuning nr = cfg.tuning();
        if (nr != null && rotate && nr.qkNorm()) {
            // Llama 4's rotated layers: each head of Q and K RMS-normalised after the rotation, no weights.
            for (int o = 0; o < qd; o += hd) norms.rmsUnweighted(q, r * qd + o, hd);
            for (int o = 0; o < kvd; o += hd) norms.rmsUnweighted(k, r * kvd + o, hd);
        }
        if (nr != null && (!rotate || nr.everyLayer())) {
            // Llama 4's unrotated layers (Mistral 3's all): Q times the position's temperature (1 below its floor).
            float t = nr.temperature(pos);
            if (t != 1f) for (int i = r * qd; i < (r + 1) * qd; i++) q[i] *= t;
        }
        rows.slot[r].store(stepLayer, pos, k, v, r * kvd);
    }

    /** Row {@code r}'s Q and K normalised where the layer has Q/K norms (before the rotation, or after it for Hunyuan). */
    private void qkNorms(LlamaWeights.Layer L, int r) {
        int qd = cfg.qDim(), kvd = cfg.kvDim(), hd = cfg.headDim();
        if (L.qNorm() != null && norms.layerNormHeads()) {
            // StableLM 2 12B, Command R+: a LayerNorm over each head of Q and K, each head its own weights.
            for (int o = 0; o < qd; o += hd) norms.layer(q, r * qd + o, L.qNorm(), o, hd, null, q, r * qd + o);
            for (int o = 0; o < kvd; o += hd) norms.layer(k, r * kvd + o, L.kNorm(), o, hd, null, k, r * kvd + o);
        } else if (L.qNorm() != null) {
            // Qwen3 and Gemma 3 RMS-normalise every head of Q and K on its own (norms one head
            // wide); OLMo 2 the whole of Q and of K (norms as wide as Q and K).
            int qs = L.qNorm().length, ks = L.kNorm().length;
            for (int o = 0; o < qd; o += qs) norms.rms(q, r * qd + o, L.qNorm(), q, r * qd + o);
            for (int o = 0; o < kvd; o += ks) norms.rms(k, r * kvd + o, L.kNorm(), k, r * kvd + o);
        }
    }

    /**
     * The attention's output projection is in {@code tmp}: its bias and norm, the FFN (on
     * {@code in}, the attention's normed input, where one norm feeds both branches), both residual adds.
     */
    private void finishLayer(LlamaWeights.Layer L, LlamaWeights.LayerBiases lb, float[] in, int n) {
        int e = cfg.nEmbd();
        addBiasRows(tmp, n, lb.attnOut());
        if (L.postAttnNorm() != null) for (int r = 0; r < n; r++) norms.rms(tmp, r * e, L.postAttnNorm(), tmp, r * e);
        boolean parallel = cfg.parallel() != LlamaVariant.Parallel.NONE;
        if (parallel) {
            // Side by side, x + (attn + ffn) below: Phi-2's FFN reads the same normed input (still
            // in xb), GPT-NeoX's its own norm of the same x.
            System.arraycopy(tmp, 0, attnOut, 0, n * e);
            if (cfg.parallel() == LlamaVariant.Parallel.OWN_NORMS) in = preNorm(L.ffnNorm(), lb.ffnNorm(), n);
        } else {
            in = residualThenNorm(L.ffnNorm(), lb.ffnNorm(), n);
        }
        if (L.experts() != null) {
            experts.run(L.experts(), in, n, tmp);
        } else if (L.gate() == null) {
            plainFfn(L, lb, in, n);
        } else {
            mats.swiglu(n, L.gate(), L.up(), in, gate, up, hb, cfg.variant().gelu);
            mats.run(n, L.down(), hb, tmp);
        }
        if (L.postFfnNorm() != null) for (int r = 0; r < n; r++) norms.rms(tmp, r * e, L.postFfnNorm(), tmp, r * e);
        if (parallel) for (int i = 0; i < n * e; i++) tmp[i] = attnOut[i] + tmp[i];
        residualThenNorm(null, null, n);
    }

    /**
     * The ungated FFN into {@code tmp}: {@code hb = act(up·in + b_up)} (GELU; Arcee's ReLU²), then
     * {@code down·hb + b_down}, each bias, where there is one, added to the rounded product as
     * llama.cpp adds it.
     */
    private void plainFfn(LlamaWeights.Layer L, LlamaWeights.LayerBiases lb, float[] in, int n) {
        mats.run(n, L.up(), in, up);
        addBiasRows(up, n, lb.up());
        boolean gelu = cfg.variant().gelu;
        for (int i = 0, end = n * cfg.nFf(); i < end; i++) {
            // Arcee's ReLU², as ggml's relu then sqr: max(x, 0), then its square rounded.
            float a = Math.max(up[i], 0f);
            hb[i] = gelu ? Elementwise.gelu(up[i]) : a * a;
        }
        mats.run(n, L.down(), hb, tmp);
        addBiasRows(tmp, n, lb.down());
    }

    /**
     * A branch's input: xb = norm(x)·weight (+ bias, LayerNorm variants) for each row, or x itself
     * where the architecture has no pre-norm (OLMo 2).
     */
    private float[] preNorm(float[] weight, float[] bias, int n) {
        if (weight == null) return x;
        stepWeight = weight;
        stepBias = bias;
        rowSteps.run(n, normStep);
        return xb;
    }

    private void normRow(int r) {
        int e = cfg.nEmbd();
        norms.block(x, r * e, stepWeight, stepBias, xb, r * e);
    }

    /**
     * x += tmp, the branch output first scaled by Granite's residual multiplier where there is one;
     * then, given a norm's {@code weight}, {@link #preNorm}'s xb of the new x, in the same pass over each row.
     * Returns the next branch's input (x where there is no norm).
     */
    private float[] residualThenNorm(float[] weight, float[] bias, int n) {
        stepWeight = weight;
        stepBias = bias;
        rowSteps.run(n, residualStep);
        return weight == null ? x : xb;
    }

    private void residualRow(int r) {
        int e = cfg.nEmbd();
        float rs = cfg.multipliers().residual();
        if (rs == 1f) {
            for (int i = r * e; i < (r + 1) * e; i++) x[i] += tmp[i];
        } else {
            for (int i = r * e; i < (r + 1) * e; i++) x[i] += tmp[i] * rs;
        }
        if (stepWeight != null) norms.block(x, r * e, stepWeight, stepBias, xb, r * e);
    }

    @Override
    public long pooledStateBytes() {
        return kPages.freeBytes() + (vPages == kPages ? 0 : vPages.freeBytes());
    }

    @Override
    public long workspaceBytes() {
        long floats = 0;
        for (float[] a : new float[][] {x, xb, q, k, v, att, tmp, gate, up, hb, outIn, logits, attnOut}) {
            floats += a == null ? 0 : a.length;
        }
        long bytes = 4 * floats + 4L * outIndex.length + mats.scratchBytes();
        if (latent != null) bytes += latent.bytes();
        if (experts != null) bytes += experts.bytes();
        return bytes;
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
            rows.slot[r] = slot;
            rows.pos[r] = pos;
            expected++;
        }
    }

    private void ensureOpen() {
        if (closed) throw new IllegalStateException("engine is closed");
    }

    @Override
    public void rest() { pool.rest(); }

    @Override
    public void wake() { pool.wake(); }

    @Override
    public void close() {
        if (closed) return;
        closed = true;
        pool.close();
        weightsArena.close();
        artifact.close();
    }

    /** Logits (last stage, compacted over rows that asked) or boundary rows (other stages). */
    private final class Result implements ForwardResult {
        @Override
        public float[] outputArray() { return lastStage ? logits : x; }

        @Override
        public int outputOffset(int row) {
            if (row < 0 || row >= rows.n) throw new IndexOutOfBoundsException("row " + row + " of " + rows.n);
            if (!lastStage) return row * cfg.nEmbd();
            if (outIndex[row] < 0) throw new IllegalArgumentException("row " + row + " did not ask for output");
            return outIndex[row] * cfg.vocabSize();
        }

        @Override
        public int outputWidth() { return lastStage ? cfg.vocabSize() : cfg.nEmbd(); }
    }
}
