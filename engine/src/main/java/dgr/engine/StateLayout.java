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
}
