package dgr.engine.llama;

import dgr.engine.KvCacheType;
import dgr.engine.KvCacheTypes;
import dgr.engine.StateLayout;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The llama stage state: per layer of the span, K and V as their cache types store them
 * ({@link KvCacheTypes}: f32 by default, or f16, bf16, q8_0 as {@code --cache-type-k/-v} choose),
 * {@code n_head_kv × head_dim} values per token each. The types are part of the id, so sessions of
 * different types never share a batch. Sliding-window layers ({@code window > 0}: Gemma 2 and 3) keep only the
 * pages a next position can still attend to: layer {@code l} of the span (model layer
 * {@code firstLayer + l}) is local when {@code (firstLayer + l) % pattern < pattern − 1}, and a
 * local layer of a slot of {@code n} tokens holds positions from the page of
 * {@code max(0, n + 1 − window)} on ({@link #keptFrom}). So a long context costs the global
 * layers' K/V in full and the local layers' about a window's worth.
 */
public record KvLayout(int layers, int nHeadKv, int headDim, int window, int pattern, int firstLayer, boolean kOnly,
                       KvCacheTypes types) implements StateLayout {
    /** Tokens per page: slots grow a page at a time. */
    public static final int PAGE_TOKENS = 64;

    /** A layout whose layers all keep every position. */
    public KvLayout(int layers, int nHeadKv, int headDim) {
        this(layers, nHeadKv, headDim, 0, 1, 0, false, KvCacheTypes.F32);
    }

    /** A layout with K and V pages, windowed as given. */
    public KvLayout(int layers, int nHeadKv, int headDim, int window, int pattern, int firstLayer) {
        this(layers, nHeadKv, headDim, window, pattern, firstLayer, false, KvCacheTypes.F32);
    }

    /**
     * Latent attention's state ({@code deepseek2}): K pages only, one head of latent + rotated key,
     * the attention reading its values from the latent part of the K pages.
     */
    public static KvLayout latent(int layers, int stateDim) {
        return new KvLayout(layers, 1, stateDim, 0, 1, 0, true, KvCacheTypes.F32);
    }

    public KvLayout {
        if (window < 0 || pattern < 1 || firstLayer < 0) {
            throw new IllegalArgumentException("window " + window + ", pattern " + pattern + ", first layer " + firstLayer);
        }
        if (types == null) throw new IllegalArgumentException("cache types are required");
        if (kOnly && !types.isF32()) {
            throw new IllegalArgumentException("--cache-type-k/--cache-type-v " + types + ": latent attention (deepseek2) keeps"
                    + " its K/V cache in f32 only");
        }
        for (KvCacheType t : new KvCacheType[] {types.k(), types.v()}) {
            if (!t.fits(nHeadKv * headDim)) {
                throw new IllegalArgumentException("cache type " + t + " stores blocks of " + t.blockValues() + " values; this"
                        + " model's K/V rows are " + nHeadKv * headDim + " values (" + nHeadKv + " kv heads x " + headDim + ")");
            }
        }
    }

    /** This layout with K and V stored as {@code t}. */
    public KvLayout withTypes(KvCacheTypes t) {
        return new KvLayout(layers, nHeadKv, headDim, window, pattern, firstLayer, kOnly, t);
    }

    @Override
    public KvCacheTypes cacheTypes() { return types; }

    /**
     * Bytes per token (every layer keeping every position) with K and V of each cache type this
     * layout could take; latent attention's only f32, q8_0 only where a row splits into blocks of 32.
     */
    @Override
    public Map<KvCacheType, Long> bytesPerTokenByCacheType() {
        Map<KvCacheType, Long> m = new LinkedHashMap<>();
        for (KvCacheType t : KvCacheType.values()) {
            if ((kOnly && t != KvCacheType.F32) || !t.fits(kvDim())) continue;
            m.put(t, (long) layers * (kOnly ? 1 : 2) * t.bytes(kvDim()));
        }
        return m;
    }

    public int kvDim() { return nHeadKv * headDim; }

    /** Whether span layer {@code l} keeps only a window of positions. */
    public boolean isLocal(int l) {
        return window > 0 && (firstLayer + l) % pattern < pattern - 1;
    }

    /** Span layers that keep only a window. */
    public int localLayers() {
        int n = 0;
        for (int l = 0; l < layers; l++) if (isLocal(l)) n++;
        return n;
    }

    /**
     * The first position a local layer still holds when a slot has {@code tokens} positions: the
     * start of the page of the oldest position the next one attends to, {@code tokens + 1 − window}.
     */
    public int keptFrom(int tokens) {
        return window == 0 ? 0 : Math.max(0, tokens + 1 - window) / PAGE_TOKENS * PAGE_TOKENS;
    }

    @Override
    public String id() {
        String id = "llama-kv-" + types.canonical() + "/" + layers + "x" + (kOnly ? 1 : 2) + "x" + nHeadKv + "x" + headDim + (kOnly ? "/k-only" : "");
        return window == 0 ? id : id + "/window" + window + "-local" + localPattern();
    }

    /** Which span layers are local, as a string of L (local) and G (global). */
    private String localPattern() {
        StringBuilder b = new StringBuilder(layers);
        for (int l = 0; l < layers; l++) b.append(isLocal(l) ? 'L' : 'G');
        return b.toString();
    }

    @Override
    public long bytesForTokens(int tokens) {
        int local = localLayers();
        long positions = (long) tokens * (layers - local) + (long) (tokens - keptFrom(tokens)) * local;
        return positions * (types.k().bytes(kvDim()) + (kOnly ? 0L : types.v().bytes(kvDim())));
    }

    @Override
    public String describe() {
        if (kOnly) {
            return "latent K float32 for " + layers + " layers, 1 head x " + headDim + " per token, read as key and as value ("
                    + bytesForTokens(1) + " bytes per token, pages of " + PAGE_TOKENS + " tokens)";
        }
        String base = "K " + types.k() + " and V " + types.v() + " for " + layers + " layers, " + nHeadKv + " kv heads x " + headDim
                + " per token each (" + bytesForTokens(1) + " bytes per token, pages of " + PAGE_TOKENS + " tokens)";
        return window == 0 ? base : base + "; " + localLayers() + " sliding-window layers keep the pages of the last "
                + window + " positions only";
    }
}
