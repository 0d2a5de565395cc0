package dgr.node.tracker;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;

/**
 * Whether a request comes from the tracker this node joined: it presents the node token as its bearer
 * token. Only such requests may name a tenant ({@code X-Dgr-Tenant}), carry a request id
 * ({@code X-Dgr-Request-Id}) and use the relay extension ({@code "dgr"} in the body: token ids per chunk,
 * a resumed session); anyone else's {@code dgr} field is ignored like any unknown field.
 */
public final class TrackerTrust {
    public static final TrackerTrust NONE = new TrackerTrust(null);

    private final byte[] token;

    private TrackerTrust(String token) {
        this.token = token == null ? null : token.getBytes(StandardCharsets.UTF_8);
    }

    public static TrackerTrust of(String nodeToken) {
        if (nodeToken == null || nodeToken.isBlank()) throw new IllegalArgumentException("--node-token must not be blank");
        return new TrackerTrust(nodeToken);
    }

    /** Compares the presented {@code Authorization} header with {@code Bearer NODE_TOKEN} in constant time. */
    public boolean fromTracker(String authorization) {
        if (token == null || authorization == null || !authorization.regionMatches(true, 0, "Bearer ", 0, 7)) return false;
        return MessageDigest.isEqual(authorization.substring(7).trim().getBytes(StandardCharsets.UTF_8), token);
    }
}
