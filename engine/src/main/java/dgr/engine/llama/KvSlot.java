package dgr.engine.llama;

import dgr.engine.StateSlot;

/**
 * One session's K/V on a llama stage. Page {@code p} of layer {@code l} holds K (or V) of tokens
 * {@code [p·PAGE, (p+1)·PAGE)}, {@code kvDim} values per token, stored as its pool's
 * {@link KvCodec} says (float32 and q8_0 pages as described here; f16 and bf16 pages hold each
 * K/V head's positions together, each head so, {@link KvCodec.Halves}). V pages hold each position's
 * {@code kvDim} floats in turn ({@link #pageOffset}); K pages are position-minor in blocks of 8
 * positions ({@link #kBlock}): element {@code i} of position {@code t} sits at
 * {@code kBlock(t) + 8i + t % 8}, so attention reads one vector of 8 positions' values per
 * dimension and scores 8 positions at once without summing across lanes. A sliding-window layer
 * ({@link KvLayout#isLocal}) gives its pages below {@link KvLayout#keptFrom} back to the pool as
 * the slot grows: no later position attends to them. A {@link KvLayout#kOnly} slot (latent
 * attention) has K pages only.
 */
final class KvSlot implements StateSlot {
    private final LlamaEngine owner;
    private final KvLayout layout;
    private final KvPagePool kPool, vPool;
    private final KvCodec kCodec, vCodec;
    private final int capacity;
    private final Object[][] k;
    private final Object[][] v;
    private int pages;
    /** Pages below this index of every local layer are given back (null). */
    private int localFirstPage;
    private int length;
    private boolean closed;
    /** Forward-pass stamp: the last batch this slot appeared in, to catch non-consecutive runs. */
    long batchStamp = -1;

    KvSlot(LlamaEngine owner, KvLayout layout, KvPagePool kPool, KvPagePool vPool, int capacity) {
        this.owner = owner;
        this.layout = layout;
        this.kPool = kPool;
        this.vPool = vPool;
        this.kCodec = kPool.codec();
        this.vCodec = vPool.codec();
        this.capacity = capacity;
        int maxPages = (capacity + KvLayout.PAGE_TOKENS - 1) / KvLayout.PAGE_TOKENS;
        this.k = new Object[layout.layers()][maxPages];
        this.v = new Object[layout.layers()][maxPages];
    }

    /** A slot whose K and V pages come from one pool (one cache type). */
    KvSlot(LlamaEngine owner, KvLayout layout, KvPagePool pool, int capacity) {
        this(owner, layout, pool, pool, capacity);
    }

    LlamaEngine owner() { return owner; }

    /** Makes room for positions below {@code tokens}. */
    void ensure(int tokens) {
        int need = (tokens + KvLayout.PAGE_TOKENS - 1) / KvLayout.PAGE_TOKENS;
        for (; pages < need; pages++) {
            for (int l = 0; l < k.length; l++) {
                k[l][pages] = kPool.take();
                if (!layout.kOnly()) v[l][pages] = vPool.take();
            }
        }
    }

    /**
     * Records that positions below {@code n} are written, and gives back the local layers' pages
     * that no position from {@code n} on attends to.
     */
    void setLength(int n) {
        length = n;
        int keep = layout.keptFrom(n) / KvLayout.PAGE_TOKENS;
        for (; localFirstPage < keep; localFirstPage++) {
            for (int l = 0; l < k.length; l++) if (layout.isLocal(l)) giveBack(l, localFirstPage);
        }
    }

    /** The K page holding {@code pos} at {@code layer}, as its codec lays it out (a {@code float[]} for f32). */
    Object kPage(int layer, int pos) { return k[layer][pos / KvLayout.PAGE_TOKENS]; }

    /** The V page holding {@code pos} at {@code layer}, as its codec lays it out. */
    Object vPage(int layer, int pos) { return v[layer][pos / KvLayout.PAGE_TOKENS]; }

    /** The float32 K page holding {@code pos} (latent attention, which keeps f32 only). */
    float[] kPageF32(int layer, int pos) { return (float[]) kPage(layer, pos); }

    /** Position {@code pos}'s K and V ({@code kvDim} floats each at {@code src[so ..]}) rounded into {@code layer}'s pages. */
    void store(int layer, int pos, float[] kSrc, float[] vSrc, int so) {
        kCodec.storeK(kPage(layer, pos), pos, kSrc, so);
        vCodec.storeV(vPage(layer, pos), pos, vSrc, so);
    }

    /** Where position {@code pos}'s V starts in its page. */
    static int pageOffset(int pos, int kvDim) { return (pos % KvLayout.PAGE_TOKENS) * kvDim; }

    /** Where the K block of 8 positions holding {@code pos} starts in its page. */
    static int kBlock(int pos, int kvDim) { return (pos % KvLayout.PAGE_TOKENS) / 8 * 8 * kvDim; }

    @Override
    public int length() { return length; }

    @Override
    public int capacity() { return capacity; }

    @Override
    public long bytes() { return layout.bytesForTokens(length); }

    /**
     * Forgets positions {@code >= n}. Refused, with nothing changed, when sliding-window layers
     * have already given back pages that position {@code n} would attend to again (0 is always
     * allowed: nothing is attended to then).
     */
    @Override
    public void truncate(int n) {
        if (n < 0) throw new IllegalArgumentException("truncate to " + n);
        if (n >= length) return;
        if (n > 0 && layout.keptFrom(n) / KvLayout.PAGE_TOKENS < localFirstPage) {
            throw new UnsupportedOperationException("cannot roll back to " + n + " positions: the sliding-window layers keep "
                    + "positions from " + localFirstPage * KvLayout.PAGE_TOKENS + " only (window " + layout.window() + ")");
        }
        length = n;
        int keep = (n + KvLayout.PAGE_TOKENS - 1) / KvLayout.PAGE_TOKENS;
        release(keep);
    }

    /** Layer {@code l}'s K and V page {@code p} back to the pool, unless given back already (a local layer's). */
    private void giveBack(int l, int p) {
        if (k[l][p] == null) return;
        kPool.give(k[l][p]);
        if (v[l][p] != null) vPool.give(v[l][p]);
        k[l][p] = null;
        v[l][p] = null;
    }

    private void release(int keep) {
        for (; pages > keep; pages--) {
            for (int l = 0; l < k.length; l++) giveBack(l, pages - 1);
        }
        if (pages == 0) localFirstPage = 0;
    }

    @Override
    public boolean isClosed() { return closed; }

    @Override
    public void close() {
        if (closed) return;
        closed = true;
        length = 0;
        release(0);
    }
}
