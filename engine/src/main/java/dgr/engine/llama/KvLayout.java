package dgr.engine.llama;

import dgr.engine.StateLayout;

/**
 * The llama stage state: per layer of the span, K and V as float32, {@code n_head_kv × head_dim}
 * values per token each.
 */
public record KvLayout(int layers, int nHeadKv, int headDim) implements StateLayout {
    /** Tokens per page: slots grow a page at a time. */
    public static final int PAGE_TOKENS = 64;

    public int kvDim() { return nHeadKv * headDim; }

    @Override
    public String id() {
        return "llama-kv-f32/" + layers + "x2x" + nHeadKv + "x" + headDim;
    }

    @Override
    public long bytesForTokens(int tokens) {
        return (long) tokens * layers * 2L * nHeadKv * headDim * Float.BYTES;
    }

    @Override
    public String describe() {
        return "K and V float32 for " + layers + " layers, " + nHeadKv + " kv heads x " + headDim
                + " per token each (" + bytesForTokens(1) + " bytes per token, pages of " + PAGE_TOKENS + " tokens)";
    }
}
