package dgr.bench.target;

import dgr.bench.workload.RequestSpec;
import java.util.List;

/**
 * What the load generator drives: an engine and scheduler in this process, or an OpenAI-compatible
 * server over HTTP. {@link #send} blocks its (virtual) thread until the request's stream ends.
 */
public sealed interface Target extends AutoCloseable permits InProcessTarget, HttpTarget {
    TargetInfo info();

    /**
     * Sends one request and waits for its end. Never throws for a failed request: the record carries
     * the error.
     */
    RequestRecord send(long id, String level, String tenant, int client, RequestSpec spec, long originNanos)
            throws InterruptedException;

    /** Marks the start of a level (clears per-level server observations). */
    void beginLevel();

    /** What the server side saw during the level that just ended; {@code records} are its requests. */
    ServerObservation endLevel(List<RequestRecord> records, long originNanos) throws InterruptedException;

    @Override
    void close();
}
