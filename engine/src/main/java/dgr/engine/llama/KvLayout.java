package dgr.engine.llama;

import dgr.engine.StateLayout;

/**
 * The llama stage state: per layer of the span, K and V as float32, {@code n_head_kv × head_dim}
 * values per token each. Sliding-window layers ({@code window > 0}: Gemma 2 and 3) keep only the
 * pages a next position can still attend to: layer {@code l} of the span (model layer
 * {@code firstLayer + l}) is local when {@code (firstLayer + l) % pattern < pattern − 1}, and a
 * local layer of a slot of {@code n} tokens holds positions from the page of
 * {@code max(0, n + 1 − window)} on ({@link #keptFrom}). So a long context costs the global
 * layers' K/V in full and the local layers' about a window's worth.
 */
public record KvLayout(int layers, int nHeadKv, int headDim, int window, int pattern, int firstLayer, boolean kOnly)
        implements StateLayout {
    /** Tokens per page: slots grow a page at a time. */
    public static final int PAGE_TOKENS = 64;

    /** A layout whose layers all keep every position. */
    public KvLayout(int layers, int nHeadKv, int headDim) {
        this(layers, nHeadKv, headDim, 0, 1, 0, false);
    }

    /** A layout with K and V pages, windowed as given. */
    public KvLayout(int layers, int nHeadKv, int headDim, int window, int pattern, int firstLayer) {
        this(layers, nHeadKv, headDim, window, pattern, firstLayer, false);
    }

    /**
     * Latent attention's state ({@code deepseek2}): K pages only, one head of latent + rotated key,
     * the attention reading its values from the latent part of the K pages.
     */
    public static KvLayout latent(int layers, int stateDim) {
        return new KvLayout(layers, 1, stateDim, 0, 1, 0, true);
    }

    public KvLayout {
        if (window < 0 || pattern < 1 || firstLayer < 0) {
            throw new IllegalArgumentException("window " + window + ", pattern " + pattern + ", first layer " + firstLayer);
        }
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
        String id = "llama-kv-f32/" + layers + "x" + (kOnly ? 1 : 2) + "x" + nHeadKv + "x" + headDim + (kOnly ? "/k-only" : "");
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
        return positions * (kOnly ? 1L : 2L) * nHeadKv * headDim * Float.BYTES;
    }

    @Override
    public String describe() {
        if (kOnly) {
            return "latent K float32 for " + layers + " layers, 1 head x " + headDim + " per token, read as key and as value ("
                    + bytesForTokens(1) + " bytes per token, pages of " + PAGE_TOKENS + " tokens)";
        }
        String base = "K and V float32 for " + layers + " layers, " + nHeadKv + " kv heads x " + headDim
                + " per token each (" + bytesForTokens(1) + " bytes per token, pages of " + PAGE_TOKENS + " tokens)";
        return window == 0 ? base : base + "; " + localLayers() + " sliding-window layers keep the pages of the last "
                + window + " positions only";
    }
}
