package dgr.engine.deepseek4;

import dgr.engine.ArtifactHash;
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
import dgr.engine.kernel.Q8Kernels;
import dgr.engine.kernel.Scratch;
import dgr.engine.kernel.WorkerPool;
import dgr.engine.llama.Matmuls;
import dgr.gguf.GgufArtifact;
import java.lang.foreign.Arena;
import java.nio.file.Path;

/**
 * The {@code deepseek4} architecture (DSV4-SPEC section 2) over one layer span, on the kernels the
 * llama family runs: {@code java-q8} (activations rounded to 8 bits against quantised matrices,
 * the default where its native kernel runs), {@code java-simd} (float32 activations) or
 * {@code java-scalar} (reference).
 *
 * <p>A batch runs layer by layer. Per-token work (hyper-connections, projections, MoE) is done for
 * all rows together, each weight row read once for all of them; attention walks each session's
 * rows in position order, writing the token's window row and compressor state and then attending,
 * which is exactly token-by-token decoding. Every number a row gets is computed by the same code
 * in the same order whatever the batch holds (batch invariance).
 */
public final class Dsv4Engine implements Engine {
    private final GgufArtifact file;
    private final Dsv4Config c;
    private final Dsv4Weights w;
    private final Arena weightsArena;
    private final WorkerPool pool;
    private final EngineId id;
    private final EngineFeatures features;
    private final Recipe recipe;
    private final Dsv4StateLayout layout;
    private final BoundarySchema boundary;
    private final ModelInfo info;
    private final int firstLayer, endLayer, contextLength, maxRows;
    private final Dsv4Rope ropeWindow, ropeCompressed;
    private final Dsv4Forward fwd;
    private final Matmuls mats;
    private boolean closed;

    /** Builds the engine over an open artifact (closed by {@link #close()}); {@code sha256} is the artifact's hash. */
    public Dsv4Engine(GgufArtifact file, String sha256, EngineOptions o) {
        this.file = file;
        this.c = Dsv4Config.read(file);
        this.firstLayer = o.firstLayer();
        this.endLayer = o.endLayer() < 0 ? c.nLayer() : o.endLayer();
        if (firstLayer < 0 || endLayer > c.nLayer() || firstLayer >= endLayer) {
            throw new IllegalArgumentException("layer span [" + firstLayer + ", " + endLayer + ") is not within the model's "
                    + c.nLayer() + " layers");
        }
        if (firstLayer > 0 && firstLayer < c.nHash()) {
            throw new IllegalArgumentException("layers 0.." + (c.nHash() - 1) + " route experts by token id and must be on the first stage");
        }
        int ctx = o.contextLength() > 0 ? o.contextLength() : Math.min(c.contextLength(), EngineOptions.DEFAULT_CONTEXT_CAP);
        this.contextLength = ctx;
        this.maxRows = o.maxRows();
        // The engine is chosen as for the llama family: java-q8 where its native kernel runs.
        EngineOptions.Kind kind = o.kind() == EngineOptions.Kind.AUTO ? EngineOptions.Kind.preferred() : o.kind();
        Kernels kernels = switch (kind) {
            case AUTO, SIMD -> Kernels.of(true);
            case SCALAR -> Kernels.of(false);
            case Q8 -> new Q8Kernels();
        };
        this.weightsArena = Arena.ofShared();
        try {
            this.w = new Dsv4Weights(file, c, firstLayer, endLayer, kernels, weightsArena);
        } catch (RuntimeException | Error e) {
            weightsArena.close();
            throw e;
        }
        // The id names the kernels that run, so it cannot disagree with them.
        this.id = EngineId.of(kernels.name());
        int threads = Math.max(1, o.threads());
        this.features = new EngineFeatures(true, maxRows, threads);
        this.ropeWindow = new Dsv4Rope(c.nRot(), c.ropeBase(), false, 1.0, c.nCtxOrig(), ctx);
        this.ropeCompressed = new Dsv4Rope(c.nRot(), c.compressRopeBase(), c.yarn(), c.freqScale(), c.nCtxOrig(), ctx);
        int[] spanRatios = java.util.Arrays.copyOfRange(c.ratios(), firstLayer, endLayer);
        this.layout = new Dsv4StateLayout(firstLayer, spanRatios, c.nSwa(), c.headDim(), c.idxDim());
        this.boundary = new BoundarySchema(Dsv4Config.ARCH, c.residualWidth(), "f32", 1);
        this.recipe = new Recipe(sha256, Dsv4Config.ARCH, firstLayer, endLayer, c.nLayer(), ctx, "f32",
                "window:" + ropeWindow.describe + ";compressed:" + ropeCompressed.describe);
        var md = file.metadata();
        this.info = new ModelInfo(Dsv4Config.ARCH, md.getString("general.name", file.path().getFileName().toString()),
                c.vocab(), ctx, c.nLayer(), c.nEmbd(), w.parameters, md);
        Scratch[] scratch = new Scratch[threads];
        for (int i = 0; i < threads; i++) scratch[i] = new Scratch(Dsv4Weights.widestInput(c), 8);
        this.pool = new WorkerPool(threads, "dgr-v4-" + id.name());
        this.mats = new Matmuls(kernels, pool, scratch);
        boolean simd = kind != EngineOptions.Kind.SCALAR;
        this.fwd = new Dsv4Forward(c, w, mats, new Dsv4Attention(c, ropeWindow, ropeCompressed, threads, simd),
                firstLayer, endLayer, maxRows);
    }

    /** Loads a deepseek4 GGUF (the caller has checked the architecture or lets the config check it). */
    public static Dsv4Engine load(Path path, EngineOptions options) {
        GgufArtifact f = GgufArtifact.open(path);
        try {
            return new Dsv4Engine(f, ArtifactHash.sha256(f.parts().getFirst().path()), options);
        } catch (RuntimeException e) {
            f.close();
            throw e;
        }
    }

    /** The weights as the kernels read them (tests check their layouts). */
    Dsv4Weights weights() { return w; }

    /** MTP layers present in the file: loaded by name only and never run (normal decoding does not draft). */
    public int ignoredMtpLayers() { return c.nNextn(); }

    @Override public EngineId id() { return id; }
    @Override public EngineFeatures features() { return features; }
    @Override public Recipe recipe() { return recipe; }
    @Override public StateLayout stateLayout() { return layout; }
    @Override public BoundarySchema boundarySchema() { return boundary; }
    @Override public ModelInfo info() { return info; }

    @Override
    public StateSlot openSlot() {
        return new Dsv4State(this, layout, contextLength);
    }

    @Override
    public ForwardResult forward(Batch batch) {
        validate(batch);
        return fwd.run(batch);
    }

    /** Checks every row before any state is touched (Engine.forward's contract). */
    private void validate(Batch b) {
        int n = b.size();
        if (n > maxRows) throw new IllegalArgumentException("batch has " + n + " rows, engine accepts " + maxRows);
        boolean first = firstLayer == 0;
        if (!first && b.boundaryWidth() != c.residualWidth()) {
            throw new IllegalArgumentException("boundary rows are " + b.boundaryWidth() + " wide, " + boundary.id() + " needs "
                    + c.residualWidth());
        }
        java.util.Set<StateSlot> seen = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        for (int r = 0; r < n; r++) {
            StateSlot s = b.slot(r);
            if (!(s instanceof Dsv4State st) || st.owner != this) {
                throw new IllegalArgumentException("row " + r + ": slot was not opened by this engine");
            }
            if (st.isClosed()) throw new IllegalArgumentException("row " + r + ": slot is closed");
            int p = b.position(r);
            boolean continues = r > 0 && b.slot(r - 1) == s;
            if (continues) {
                if (p != b.position(r - 1) + 1) {
                    throw new IllegalArgumentException("row " + r + ": position " + p + " does not follow " + b.position(r - 1));
                }
            } else {
                if (!seen.add(s)) throw new IllegalArgumentException("row " + r + ": a session's rows must be consecutive");
                if (p != s.length()) {
                    throw new IllegalArgumentException("row " + r + ": position " + p + " is not at the slot's length " + s.length());
                }
            }
            if (p >= contextLength) throw new IllegalArgumentException("row " + r + ": position " + p + " is past the context " + contextLength);
            if (first) {
                int t = b.token(r);
                if (t < 0 || t >= c.vocab()) throw new IllegalArgumentException("row " + r + ": token " + t + " is outside 0.." + (c.vocab() - 1));
            } else if (b.token(r) >= 0) {
                throw new IllegalArgumentException("row " + r + ": a later stage takes boundary rows, not tokens");
            }
        }
    }

    /** The pass's, attention's, experts' and workers' buffers (Engine.workspaceBytes); they grow with the batches and contexts run. */
    @Override
    public long workspaceBytes() {
        return fwd.bytes() + mats.scratchBytes();
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
        file.close();
    }
}
