package dgr.engine;

/**
 * The K and V cache types of a llama stage ({@code --cache-type-k}, {@code --cache-type-v}).
 * {@link #canonical} names them in recipes and state layout ids: the type when both are the same
 * ({@code f32}, {@code q8_0}), else {@code k-TYPE.v-TYPE}.
 */
public record KvCacheTypes(KvCacheType k, KvCacheType v) {
    public static final KvCacheTypes F32 = new KvCacheTypes(KvCacheType.F32, KvCacheType.F32);

    public KvCacheTypes {
        if (k == null || v == null) throw new IllegalArgumentException("cache types are required");
    }

    /** Both K and V of {@code t}. */
    public static KvCacheTypes of(KvCacheType t) {
        return new KvCacheTypes(t, t);
    }

    public boolean isF32() { return k == KvCacheType.F32 && v == KvCacheType.F32; }

    public String canonical() {
        return k == v ? k.flag() : "k-" + k.flag() + ".v-" + v.flag();
    }

    @Override
    public String toString() { return canonical(); }
}
