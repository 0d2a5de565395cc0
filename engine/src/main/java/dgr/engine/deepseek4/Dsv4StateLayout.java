package dgr.engine.deepseek4;

import dgr.engine.StateLayout;

/**
 * What one V4 session keeps per layer of a stage (DSV4-SPEC 3.1), all float32:
 * <ul>
 *   <li>every layer: the raw window, K(=V) rows of the last min(L, n_swa) tokens, d wide;</li>
 *   <li>CSA (ratio 4): ⌊L/4⌋ compressed entries (d) and ⌊L/4⌋ indexer keys (d_I), plus two
 *       compressor rings of 8 rows holding value and score (2·2d and 2·2d_I floats a row);</li>
 *   <li>HCA (ratio 128): ⌊L/128⌋ compressed entries (d) plus a ring of 128 rows (2·d floats a row).</li>
 * </ul>
 * An entry exists once its block is complete: block b at position (b+1)·ratio − 1. The rings are
 * allocated when the slot opens, so they count from length 0.
 */
record Dsv4StateLayout(int firstLayer, int[] ratios, int nSwa, int headDim, int idxDim) implements StateLayout {
    static final int BYTES = 4;
    static final int CSA_RING = 8;
    static final int HCA_RING = 128;

    @Override
    public String id() {
        StringBuilder r = new StringBuilder();
        for (int x : ratios) r.append(r.isEmpty() ? "" : ".").append(x);
        return "deepseek4-f32-v1-l" + firstLayer + "+" + ratios.length + "-swa" + nSwa + "-d" + headDim + "-di" + idxDim
                + "-r" + r;
    }

    @Override
    public long bytesForTokens(int tokens) {
        long total = 0;
        for (int ratio : ratios) total += layerBytes(ratio, tokens);
        return total;
    }

    long layerBytes(int ratio, int tokens) {
        long floats = (long) Math.min(tokens, nSwa) * headDim;
        if (ratio == 4) floats += (long) (tokens / 4) * (headDim + idxDim) + fixedFloats(ratio);
        if (ratio == 128) floats += (long) (tokens / 128) * headDim + fixedFloats(ratio);
        return floats * BYTES;
    }

    /** Compressor ring floats of one layer: value and score rows. */
    long fixedFloats(int ratio) {
        return switch (ratio) {
            case 4 -> (long) CSA_RING * 2 * (2L * headDim) + (long) CSA_RING * 2 * (2L * idxDim);
            case 128 -> (long) HCA_RING * 2 * headDim;
            default -> 0;
        };
    }

    @Override
    public String describe() {
        int csa = 0, hca = 0;
        for (int x : ratios) { if (x == 4) csa++; else if (x == 128) hca++; }
        return "deepseek4 state, f32: " + ratios.length + " layers (" + csa + " CSA, " + hca + " HCA, "
                + (ratios.length - csa - hca) + " window-only); per layer " + (headDim * BYTES) + " B × min(L, " + nSwa
                + ") window; CSA + " + ((headDim + idxDim) * BYTES) + " B × ⌊L/4⌋ + " + fixedFloats(4) * BYTES
                + " B rings; HCA + " + (headDim * BYTES) + " B × ⌊L/128⌋ + " + fixedFloats(128) * BYTES + " B ring";
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Dsv4StateLayout l && l.id().equals(id());
    }

    @Override
    public int hashCode() { return id().hashCode(); }
}
