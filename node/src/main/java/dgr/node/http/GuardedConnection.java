package dgr.node.http;

import io.helidon.common.concurrency.limits.Limit;
import io.helidon.webserver.spi.ServerConnection;
import java.time.Duration;

/**
 * One served HTTP/1 connection: Helidon's, with its slot under the cap given back when it ends and
 * the guard's per-connection state set up on (and cleared from) the thread that reads it.
 */
final class GuardedConnection implements ServerConnection {
    private final ServerConnection http1;
    private final GuardedContext ctx;
    private final ConnectionGuard guard;
    private final Runnable release;

    GuardedConnection(ServerConnection http1, GuardedContext ctx, ConnectionGuard guard, Runnable release) {
        this.http1 = http1;
        this.ctx = ctx;
        this.guard = guard;
        this.release = release;
    }

    @Override
    public void handle(Limit limit) throws InterruptedException {
        ctx.readBy(Thread.currentThread());
        try {
            http1.handle(limit);
        } finally {
            guard.connectionEnded();
            release.run();
        }
    }

    @Override
    public Duration idleTime() { return http1.idleTime(); }

    @Override
    public void close(boolean interrupt) { http1.close(interrupt); }
}
