package dgr.tracker;

import dgr.tracker.routing.RoutingPolicy;
import java.time.Duration;

/**
 * How a tracker runs. Knobs are named after what they bound.
 *
 * @param host              address to bind
 * @param port              port to bind; 0 picks a free one
 * @param nodeToken         the token nodes present to join and heartbeat, and the tracker presents to nodes
 *                          (null: no node can join; only admin-registered backends serve)
 * @param adminToken        the bearer token of {@code /v1/nodes} (null: the admin API answers 401 to everyone)
 * @param routing           the routing policy
 * @param heartbeatTimeout  a node silent this long is out of routing
 * @param maxQueueWait      longest a request waits for headroom before 429
 * @param maxQueuedRequests most requests waiting for headroom at once; beyond it 429 at once
 * @param maxBodyBytes      largest request body accepted
 * @param connectTimeout    TCP connect deadline towards a node (a refused or silent node is retried elsewhere)
 * @param firstByteTimeout  deadline for a node's response headers (prefill included); then retried elsewhere
 * @param chunkTimeout      longest silence inside a node's stream before the node counts as broken and the
 *                          stream is resumed elsewhere
 */
public record TrackerConfig(String host, int port, String nodeToken, String adminToken, RoutingPolicy routing,
                            Duration heartbeatTimeout, Duration maxQueueWait, int maxQueuedRequests, long maxBodyBytes,
                            Duration connectTimeout, Duration firstByteTimeout, Duration chunkTimeout) {
    public TrackerConfig {
        if (port < 0 || port > 65535) throw new IllegalArgumentException("--port must be in [0, 65535]: " + port);
        if (nodeToken != null && nodeToken.isBlank()) throw new IllegalArgumentException("--node-token must not be blank");
        if (adminToken != null && adminToken.isBlank()) throw new IllegalArgumentException("--admin-token must not be blank");
        if (maxQueuedRequests < 0) throw new IllegalArgumentException("maxQueuedRequests must be >= 0");
    }

    public static TrackerConfig defaults() {
        return new TrackerConfig("127.0.0.1", 8000, null, null, RoutingPolicy.CAPACITY, Duration.ofSeconds(3),
                Duration.ofSeconds(10), 256, 4L << 20, Duration.ofSeconds(1), Duration.ofSeconds(60),
                Duration.ofSeconds(10));
    }

    public TrackerConfig withAddress(String h, int p) {
        return new TrackerConfig(h, p, nodeToken, adminToken, routing, heartbeatTimeout, maxQueueWait,
                maxQueuedRequests, maxBodyBytes, connectTimeout, firstByteTimeout, chunkTimeout);
    }

    public TrackerConfig withTokens(String node, String admin) {
        return new TrackerConfig(host, port, node, admin, routing, heartbeatTimeout, maxQueueWait,
                maxQueuedRequests, maxBodyBytes, connectTimeout, firstByteTimeout, chunkTimeout);
    }

    public TrackerConfig withRouting(RoutingPolicy r) {
        return new TrackerConfig(host, port, nodeToken, adminToken, r, heartbeatTimeout, maxQueueWait,
                maxQueuedRequests, maxBodyBytes, connectTimeout, firstByteTimeout, chunkTimeout);
    }

    public TrackerConfig withQueue(Duration wait, int maxQueued) {
        return new TrackerConfig(host, port, nodeToken, adminToken, routing, heartbeatTimeout, wait, maxQueued,
                maxBodyBytes, connectTimeout, firstByteTimeout, chunkTimeout);
    }

    public TrackerConfig withHeartbeatTimeout(Duration t) {
        return new TrackerConfig(host, port, nodeToken, adminToken, routing, t, maxQueueWait, maxQueuedRequests,
                maxBodyBytes, connectTimeout, firstByteTimeout, chunkTimeout);
    }

    public TrackerConfig withMaxBodyBytes(long bytes) {
        return new TrackerConfig(host, port, nodeToken, adminToken, routing, heartbeatTimeout, maxQueueWait,
                maxQueuedRequests, bytes, connectTimeout, firstByteTimeout, chunkTimeout);
    }

    public TrackerConfig withChunkTimeout(Duration t) {
        return new TrackerConfig(host, port, nodeToken, adminToken, routing, heartbeatTimeout, maxQueueWait,
                maxQueuedRequests, maxBodyBytes, connectTimeout, firstByteTimeout, t);
    }
}
