package dgr.node.stage;

import io.grpc.CallCredentials;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.concurrent.Executor;

/**
 * The shared secret of a cluster's stages. Kept only as its SHA-256; a caller's token is hashed and
 * compared in constant time, and a stream without the right one is closed UNAUTHENTICATED before
 * its first message is read (the interceptor runs before the service sees the call).
 */
public final class ClusterToken {
    static final Metadata.Key<String> HEADER = Metadata.Key.of("dgr-cluster-token", Metadata.ASCII_STRING_MARSHALLER);

    private final byte[] hash;
    private final String token;

    private ClusterToken(String token) {
        this.token = token;
        this.hash = sha256(token);
    }

    public static ClusterToken of(String token) {
        if (token == null || token.isBlank()) {
            throw new IllegalArgumentException("--cluster-token is required for stages: every stage stream carries it");
        }
        if (token.length() < 8) throw new IllegalArgumentException("--cluster-token must be at least 8 characters");
        for (int i = 0; i < token.length(); i++) {
            char c = token.charAt(i);
            if (c < 0x21 || c > 0x7e) throw new IllegalArgumentException("--cluster-token must be printable ASCII without spaces");
        }
        return new ClusterToken(token);
    }

    boolean matches(String presented) {
        return presented != null && MessageDigest.isEqual(hash, sha256(presented));
    }

    /** Server side: refuses calls without the token. */
    ServerInterceptor interceptor() {
        return new ServerInterceptor() {
            @Override
            public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
                if (!matches(headers.get(HEADER))) {
                    call.close(Status.UNAUTHENTICATED.withDescription(headers.get(HEADER) == null
                            ? "no cluster token: stage streams need the dgr-cluster-token header"
                            : "wrong cluster token"), new Metadata());
                    return new ServerCall.Listener<>() {};
                }
                return next.startCall(call, headers);
            }
        };
    }

    /** Client side: attaches the token to every call. */
    CallCredentials credentials() {
        return new CallCredentials() {
            @Override
            public void applyRequestMetadata(RequestInfo info, Executor executor, MetadataApplier applier) {
                Metadata m = new Metadata();
                m.put(HEADER, token);
                applier.apply(m);
            }
        };
    }

    private static byte[] sha256(String s) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
