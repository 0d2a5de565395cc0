package dgr.engine;

/**
 * What a session keeps on a stage, with its size as a formula of the session's length, so the
 * scheduler can budget state bytes before admitting a session.
 */
public interface StateLayout {
    /** Stable id; enters the compatibility key. */
    String id();

    /** Bytes a session holds after {@code tokens} positions have been processed. */
    long bytesForTokens(int tokens);

    /** A human-readable description (dtype, per-layer sizes) for the capability report. */
    String describe();

    /** The K/V cache types the state is stored in (f32 for state that has no choice, such as DeepSeek-V4's). */
    default KvCacheTypes cacheTypes() {
        return KvCacheTypes.F32;
    }

    /**
     * State bytes per token with K and V of each cache type this layout could be stored in, for the
     * capability report; empty where the state does not grow by a fixed amount per token or has no choice.
     */
    default java.util.Map<KvCacheType, Long> bytesPerTokenByCacheType() {
        return java.util.Map.of();
    }
}
