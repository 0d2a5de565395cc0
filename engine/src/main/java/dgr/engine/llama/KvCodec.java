package dgr.engine.llama;

import dgr.engine.KvCacheType;
import dgr.engine.kernel.HalfFloats;

/**
 * How one {@link KvCacheType} lays a page of K or V out ({@link KvSlot}: 64 positions, K
 * position-minor in blocks of 8, V position-major; f16 and bf16 pages head by head, {@link Halves}),
 * rounds values into it on store, and decodes K/V heads of a page back to floats for {@link TiledAttention}. Stores round each value (for
 * {@code q8_0} each block of 32 values of one position) by a fixed rule of its own inputs
 * ({@link KvCacheType}); decoding is exact (every stored value is a float), so the attention
 * arithmetic on decoded tiles is the f32 path's, and batch invariance holds for every type.
 */
sealed interface KvCodec {
    KvCacheType type();

    /** Values per K/V head. */
    int hd();

    /** A new page of {@code PAGE_TOKENS} positions. */
    Object newPage();

    /** Bytes of one page's values (array headers aside). */
    long pageBytes();

    /** Position {@code pos}'s K, {@code kvd} floats at {@code src[so ..]}, rounded into its page. */
    void storeK(Object page, int pos, float[] src, int so);

    /** Position {@code pos}'s V, {@code kvd} floats at {@code src[so ..]}, rounded into its page. */
    void storeV(Object page, int pos, float[] src, int so);

    /**
     * The keys of K/V heads {@code [kh0, kh1)} at page positions {@code [j0, j1)} (multiples of 8)
     * into {@code dst} head by head, each head in the K page layout of that head alone: position
     * {@code j}, element {@code i} of head {@code kh} at {@code (kh − kh0)·PAGE_TOKENS·hd + j/8·8·hd + 8i + j%8}
     * (for one head, the page layout of a one-head model).
     */
    default void decodeK(Object page, int j0, int j1, int kh0, int kh1, float[] dst) {
        decodeK(page, j0, j1, kh0, kh1, dst, 0, KvLayout.PAGE_TOKENS);
    }

    /**
     * {@link #decodeK(Object, int, int, int, int, float[])} with position {@code j} of head
     * {@code kh} at {@code dst[(kh − kh0)·span·hd + (j − base)·hd ..]} ({@code base} a multiple of 8,
     * {@code span} positions per head): a decode step widens a stretch of positions at a time into a
     * buffer that stays in L1.
     */
    void decodeK(Object page, int j0, int j1, int kh0, int kh1, float[] dst, int base, int span);

    /**
     * The values of K/V heads {@code [kh0, kh1)} at page positions {@code [j0, j1)} into
     * {@code dst[(kh − kh0)·PAGE_TOKENS·hd + j·hd + i]}, head by head.
     */
    default void decodeV(Object page, int j0, int j1, int kh0, int kh1, float[] dst) {
        decodeV(page, j0, j1, kh0, kh1, dst, 0, KvLayout.PAGE_TOKENS);
    }

    /**
     * {@link #decodeV(Object, int, int, int, int, float[])} with position {@code j} of head
     * {@code kh} at {@code dst[(kh − kh0)·span·hd + (j − base)·hd ..]}.
     */
    void decodeV(Object page, int j0, int j1, int kh0, int kh1, float[] dst, int base, int span);

    /** A codec of K/V rows of {@code kvd} values, heads of {@code hd}. */
    static KvCodec of(KvCacheType type, int kvd, int hd) {
        if (!type.fits(kvd)) {
            throw new IllegalArgumentException("cache type " + type + " stores blocks of " + type.blockValues()
                    + " values; this model's K/V rows are " + kvd + " values (n_head_kv x head_dim)");
        }
        return switch (type) {
            case F32 -> new F32(kvd, hd);
            case F16 -> new Halves(type, kvd, hd);
            case BF16 -> new Halves(type, kvd, hd);
            case Q8_0 -> new Q8(kvd, hd);
        };
    }

    /** Values per page. */
    private static int floats(int kvd) { return KvLayout.PAGE_TOKENS * kvd; }

    /** float32 pages: read in place by the attention, never decoded. */
    record F32(int kvd, int hd) implements KvCodec {
        public KvCacheType type() { return KvCacheType.F32; }
        public Object newPage() { return new float[floats(kvd)]; }
        public long pageBytes() { return 4L * floats(kvd); }

        public void storeK(Object page, int pos, float[] src, int so) {
            float[] p = (float[]) page;
            for (int i = 0, kb = KvSlot.kBlock(pos, kvd) + pos % 8; i < kvd; i++) p[kb + 8 * i] = src[so + i];
        }

        public void storeV(Object page, int pos, float[] src, int so) {
            System.arraycopy(src, so, (float[]) page, KvSlot.pageOffset(pos, kvd), kvd);
        }

        public void decodeK(Object page, int j0, int j1, int kh0, int kh1, float[] dst, int base, int span) {
            float[] p = (float[]) page;
            for (int kh = kh0; kh < kh1; kh++) {
                for (int b = j0; b < j1; b += 8) {
                    System.arraycopy(p, KvSlot.kBlock(b, kvd) + kh * hd * 8, dst, ((kh - kh0) * span + b - base) * hd, 8 * hd);
                }
            }
        }

        public void decodeV(Object page, int j0, int j1, int kh0, int kh1, float[] dst, int base, int span) {
            float[] p = (float[]) page;
            for (int kh = kh0; kh < kh1; kh++) {
                for (int j = j0; j < j1; j++) System.arraycopy(p, j * kvd + kh * hd, dst, ((kh - kh0) * span + j - base) * hd, hd);
            }
        }
    }

    /**
     * f16 or bf16 pages ({@code short[]}), rounded to nearest, ties to even, laid out head by head:
     * each K/V head's 64 positions together ({@link #at}), in the K and V orders of a one-head page.
     * A decode step's claim of half the heads then reads one contiguous run of each page where,
     * with each position's heads side by side, it read 4 KiB of every 8 KiB K block and 512 bytes
     * of every 1 KiB V row (llama-1b): on the Intel AVX-512 VM a claim's widening from memory took
     * 12 ms a step against 19 (docs/engine.md, "Decode at depth 4096 on the Intel AVX-512 VM").
     */
    record Halves(KvCacheType type, int kvd, int hd) implements KvCodec {
        /**
         * Where head {@code kh}'s page position {@code j} starts (for K, {@code j} a multiple of 8: its
         * block, element {@code i} of position {@code j + r} at {@code + 8i + r}).
         */
        static int at(int kh, int j, int hd) {
            return (kh * KvLayout.PAGE_TOKENS + j) * hd;
        }

        /**
         * An f16/bf16 page: its values, and a heap segment over them made once, through which native
         * kernels read the page in place ({@code NativeAttention}; one made per call would be garbage).
         */
        record Page(short[] values, java.lang.foreign.MemorySegment segment) {
            Page(short[] values) {
                this(values, java.lang.foreign.MemorySegment.ofArray(values));
            }
        }

        public Object newPage() { return new Page(new short[floats(kvd)]); }
        public long pageBytes() { return 2L * floats(kvd); }

        private short round(float f) {
            return type == KvCacheType.F16 ? Float.floatToFloat16(f) : HalfFloats.bf16(f);
        }

        public void storeK(Object page, int pos, float[] src, int so) {
            short[] p = ((Page) page).values();
            int j = pos % KvLayout.PAGE_TOKENS;
            for (int kh = 0; kh < kvd / hd; kh++) {
                for (int i = 0, kb = at(kh, j & ~7, hd) + j % 8; i < hd; i++) p[kb + 8 * i] = round(src[so + kh * hd + i]);
            }
        }

        public void storeV(Object page, int pos, float[] src, int so) {
            short[] p = ((Page) page).values();
            int j = pos % KvLayout.PAGE_TOKENS;
            for (int kh = 0; kh < kvd / hd; kh++) {
                for (int i = 0, o = at(kh, j, hd); i < hd; i++) p[o + i] = round(src[so + kh * hd + i]);
            }
        }

        // A head's positions [j0, j1) are one run of the page and of dst: one widening each.
        public void decodeK(Object page, int j0, int j1, int kh0, int kh1, float[] dst, int base, int span) {
            short[] p = ((Page) page).values();
            for (int kh = kh0; kh < kh1; kh++) widen(p, at(kh, j0, hd), dst, ((kh - kh0) * span + j0 - base) * hd, (j1 - j0) * hd);
        }

        public void decodeV(Object page, int j0, int j1, int kh0, int kh1, float[] dst, int base, int span) {
            short[] p = ((Page) page).values();
            for (int kh = kh0; kh < kh1; kh++) widen(p, at(kh, j0, hd), dst, ((kh - kh0) * span + j0 - base) * hd, (j1 - j0) * hd);
        }

        private void widen(short[] src, int so, float[] dst, int o, int n) {
            if (type == KvCacheType.F16) HalfFloats.f16ToFloats(src, so, dst, o, n);
            else HalfFloats.bf16ToFloats(src, so, dst, o, n);
        }
    }

    /**
     * {@code q8_0} pages: the signed bytes in the f32 layout ({@code q}), one f16 scale per 32
     * values of a position ({@code d}): for K in blocks of 8 positions, scale {@code b} of position
     * {@code j} at {@code j/8·8·(kvd/32) + 8b + j%8} (8 positions' scales side by side, as K's
     * values are), for V at {@code j·(kvd/32) + b}.
     */
    record Q8(int kvd, int hd) implements KvCodec {
        /** A q8_0 page: quantised values and scales. */
        record Page(byte[] q, short[] d) {}

        public KvCacheType type() { return KvCacheType.Q8_0; }
        public Object newPage() { return new Page(new byte[floats(kvd)], new short[floats(kvd) / 32]); }
        public long pageBytes() { return KvCacheType.Q8_0.bytes(floats(kvd)); }

        public void storeK(Object page, int pos, float[] src, int so) {
            Page p = (Page) page;
            int j = pos % KvLayout.PAGE_TOKENS, kb = KvSlot.kBlock(pos, kvd) + j % 8, db = j / 8 * 8 * (kvd / 32) + j % 8;
            for (int b = 0; b < kvd / 32; b++) {
                float id = scale(src, so + 32 * b, p.d, db + 8 * b);
                for (int i = 32 * b; i < 32 * b + 32; i++) p.q[kb + 8 * i] = HalfFloats.q8(src[so + i], id);
            }
        }

        public void storeV(Object page, int pos, float[] src, int so) {
            Page p = (Page) page;
            int j = pos % KvLayout.PAGE_TOKENS, o = j * kvd;
            for (int b = 0; b < kvd / 32; b++) {
                float id = scale(src, so + 32 * b, p.d, j * (kvd / 32) + b);
                for (int i = 32 * b; i < 32 * b + 32; i++) p.q[o + i] = HalfFloats.q8(src[so + i], id);
            }
        }

        /** ggml's rule: {@code d = max|x| / 127} stored as f16 at {@code d[di]}; returns {@code 1/d} (0 for a zero block). */
        private static float scale(float[] x, int xo, short[] d, int di) {
            float amax = 0f;
            for (int i = xo; i < xo + 32; i++) amax = Math.max(amax, Math.abs(x[i]));
            float s = amax / 127f;
            d[di] = Float.floatToFloat16(s);
            return s != 0f ? 1f / s : 0f;
        }

        public void decodeK(Object page, int j0, int j1, int kh0, int kh1, float[] dst, int base, int span) {
            Page p = (Page) page;
            for (int kh = kh0; kh < kh1; kh++) {
                for (int b = j0; b < j1; b += 8) {
                    HalfFloats.q8ToFloats8(p.q, KvSlot.kBlock(b, kvd), p.d, b / 8 * 8 * (kvd / 32), kh * hd, hd, dst,
                            ((kh - kh0) * span + b - base) * hd);
                }
            }
        }

        public void decodeV(Object page, int j0, int j1, int kh0, int kh1, float[] dst, int base, int span) {
            Page p = (Page) page;
            for (int kh = kh0; kh < kh1; kh++) {
                for (int j = j0; j < j1; j++) {
                    HalfFloats.q8ToFloats(p.q, j * kvd + kh * hd, p.d, j * (kvd / 32), kh * hd, hd, dst, ((kh - kh0) * span + j - base) * hd);
                }
            }
        }
    }
}
