package dgr.node.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dgr.node.api.ApiError;
import dgr.node.api.ErrorBody;
import io.helidon.common.buffers.BufferData;
import io.helidon.common.concurrency.limits.Limit;
import io.helidon.webserver.ConnectionContext;
import io.helidon.webserver.spi.ServerConnection;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * A connection over the cap: answered 503 in OpenAI's error shape with {@code Connection: close}
 * as soon as it is accepted (before its request is read: the answer is the same for any request),
 * then kept open at most {@link ConnectionCap#LINGER} to read what the client already sent, and
 * closed.
 */
final class RefusedConnection implements ServerConnection {
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private final ConnectionContext ctx;
    private final byte[] response;
    private final ConnectionGuard guard;
    private final long since = System.nanoTime();

    RefusedConnection(ConnectionContext ctx, byte[] response, ConnectionGuard guard) {
        this.ctx = ctx;
        this.response = response;
        this.guard = guard;
    }

    /** The whole HTTP answer a refused connection gets, for a cap of {@code served} connections. */
    static byte[] response(int served) {
        ApiError e = new ApiError(503, "server_error", "The server is at its connection limit (" + served
                + " open connections); retry shortly.", null, "too_many_connections");
        byte[] body;
        try {
            body = MAPPER.writeValueAsBytes(ErrorBody.of(e));
        } catch (JsonProcessingException x) {
            throw new UncheckedIOException(x);
        }
        byte[] head = ("HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: "
                + body.length + "\r\nRetry-After: 1\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
        byte[] all = java.util.Arrays.copyOf(head, head.length + body.length);
        System.arraycopy(body, 0, all, head.length, body.length);
        return all;
    }

    @Override
    public void handle(Limit limit) {
        try {
            ctx.dataWriter().writeNow(BufferData.create(response));
        } catch (RuntimeException gone) {
            return; // the client left first: nothing to tell it
        }
        guard.drainFor(ctx.dataReader(), ConnectionCap.LINGER);
    }

    @Override
    public Duration idleTime() { return Duration.ofNanos(System.nanoTime() - since); }

    @Override
    public void close(boolean interrupt) {
        // handle() ends by itself within the linger time
    }
}
