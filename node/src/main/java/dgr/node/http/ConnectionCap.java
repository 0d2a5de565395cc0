package dgr.node.http;

import io.helidon.webserver.ConnectionContext;
import io.helidon.webserver.spi.ServerConnection;
import io.helidon.webserver.spi.ServerConnectionSelector;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * The listener's connection cap, as the one connection selector Helidon asks for every accepted
 * socket: up to {@code served} connections get HTTP/1 ({@link GuardedConnection}); one beyond is
 * answered 503 with OpenAI's error JSON and closed at once ({@link RefusedConnection}) instead of
 * waiting unseen in the listen backlog.
 *
 * <p>Helidon's own cap (maxTcpConnections) is set to the served connections plus a few refusal
 * slots: it is taken before accept, so it is what keeps the process inside its descriptor limit;
 * this cap, counted after accept, is what makes a client over it hear "no" quickly.
 */
final class ConnectionCap implements ServerConnectionSelector {
    /** How long a refused connection is kept open to read what its client sent (closing with unread data would reset it before the 503 is read). */
    static final Duration LINGER = Duration.ofMillis(200);

    private final ServerConnectionSelector http1;
    private final ConnectionGuard guard;
    private final int served;
    private final AtomicInteger open = new AtomicInteger();
    private final LongAdder refused;
    private final byte[] refusal;

    ConnectionCap(ServerConnectionSelector http1, ConnectionGuard guard, int served, LongAdder refused) {
        this.refused = refused;
        this.http1 = http1;
        this.guard = guard;
        this.served = served;
        this.refusal = RefusedConnection.response(served);
    }

    @Override
    public int bytesToIdentifyConnection() { return 0; }

    @Override
    public Support supports(io.helidon.common.buffers.BufferData data) { return Support.SUPPORTED; }

    @Override
    public Set<String> supportedApplicationProtocols() { return http1.supportedApplicationProtocols(); }

    @Override
    public ServerConnection connection(ConnectionContext ctx) {
        if (open.incrementAndGet() > served) {
            open.decrementAndGet();
            refused.increment();
            guard.faults().fault("503: connection refused, " + served + " connections open (the cap)");
            return new RefusedConnection(ctx, refusal, guard);
        }
        try {
            GuardedContext watched = new GuardedContext(ctx, guard);
            return new GuardedConnection(http1.connection(watched), watched, guard, open::decrementAndGet);
        } catch (RuntimeException | Error e) {
            open.decrementAndGet();
            throw e;
        }
    }

    /** Connections served now. */
    int open() { return open.get(); }

    int served() { return served; }
}
