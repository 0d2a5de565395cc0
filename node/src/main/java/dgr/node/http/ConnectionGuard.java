package dgr.node.http;

import io.helidon.common.buffers.DataReader;
import io.helidon.http.Headers;
import io.helidon.http.HttpPrologue;
import io.helidon.webserver.ConnectionContext;
import io.helidon.webserver.WebServerConfig;
import io.helidon.webserver.http1.Http1Config;
import io.helidon.webserver.http1.Http1ConnectionListener;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * The listener's defences, set on Helidon's builder ({@link #configure}): the connection cap and
 * idle timeout ({@link ListenerLimits}), OpenAI-shaped bodies on Helidon's own error answers
 * ({@link TransportErrors}), the header deadline, and the connection watch.
 *
 * <p>Helidon reads each HTTP/1 connection on one virtual thread and runs the route on that same
 * thread. This guard hears each request line and each completed head on that thread (it is a
 * receive listener): between the two, and while a handler reads a body ({@link #deadline}), a
 * timer interrupts the thread when the header timeout passes, which closes the socket. Helidon's
 * own idle timeout covers the wait for a request line (it interrupts a connection reading one).
 *
 * <p>{@link #watch} lets a handler that waits for a long result learn that its client left: a
 * virtual thread blocks reading the connection, which only returns when the client closes it (or
 * sends more). The watched response then closes the connection, since that reader cannot be
 * called back.
 */
public final class ConnectionGuard implements Http1ConnectionListener, AutoCloseable {
    private final ListenerLimits limits;
    private final ScheduledExecutorService timer;
    private final ThreadLocal<ConnectionContext> connection = new ThreadLocal<>();
    private final ThreadLocal<Deadline> headDeadline = new ThreadLocal<>();
    private final ClientFaultLog faults;

    public ConnectionGuard(ListenerLimits limits, ClientFaultLog faults) {
        this.limits = limits;
        this.faults = faults;
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "dgr-connection-deadlines");
            t.setDaemon(true);
            return t;
        });
    }

    /** Applies the limits, the error bodies and this listener to a web server under construction. */
    public WebServerConfig.Builder configure(WebServerConfig.Builder b) {
        Duration idle = limits.idleTimeout();
        // Helidon checks idleness every period: a tenth of the timeout keeps the overshoot small.
        Duration period = Duration.ofMillis(Math.max(100, idle.toMillis() / 10));
        return b.maxTcpConnections(limits.effectiveMaxConnections())
                .idleConnectionTimeout(idle)
                .idleConnectionPeriod(period)
                .errorHandling(e -> e.includeEntity(true))
                .directHandlers(TransportErrors.handlers(faults, this::readingHead))
                // Only this HTTP/1 configuration: with one protocol Helidon skips sniffing the first bytes, so a
                // silent connection counts as idle from its start, and a request line that is not HTTP gets a 400.
                .protocolsDiscoverServices(false)
                .addProtocol(Http1Config.builder().addReceiveListener(this).build());
    }

    public int maxConnections() { return limits.effectiveMaxConnections(); }

    /**
     * True on a connection's thread between its request line and the end of its head: a failure
     * there is the client's (Helidon reports a connection closed mid-head as an internal error).
     */
    boolean readingHead() {
        return headDeadline.get() != null;
    }

    @Override
    public void prologue(ConnectionContext ctx, HttpPrologue prologue) {
        Deadline previous = headDeadline.get();
        if (previous != null) previous.disarm();
        headDeadline.set(interruptAfter(Thread.currentThread(), limits.headerTimeout()));
    }

    @Override
    public void headers(ConnectionContext ctx, Headers headers) {
        Deadline d = headDeadline.get();
        if (d != null) d.disarm();
        headDeadline.remove();
        connection.set(ctx);
    }

    /**
     * Runs {@code read} (a handler reading its request body) under the header timeout: past it the
     * thread is interrupted, the socket closed, and {@code read} fails.
     */
    public <T> T deadline(java.util.function.Supplier<T> read) {
        Deadline d = interruptAfter(Thread.currentThread(), limits.headerTimeout());
        try {
            return read.get();
        } finally {
            d.disarm();
        }
    }

    /**
     * Starts watching the current request's connection: {@code onGone} runs when the client closes it.
     * Call only after the body has been read; the returned handle stops the watch (the connection then
     * closes after this response: mark the response {@code Connection: close}).
     */
    public Watch watch(Runnable onGone) {
        ConnectionContext ctx = connection.get();
        if (ctx == null) return () -> {};
        DataReader reader = ctx.dataReader();
        var done = new java.util.concurrent.atomic.AtomicBoolean();
        Thread watcher = Thread.ofVirtual().name("dgr-connection-watch").start(() -> {
            try {
                reader.ensureAvailable(); // returns when the client sends more (pipelining): it is there
            } catch (RuntimeException gone) {
                if (!done.get()) onGone.run();
            }
        });
        return () -> done.set(true);
    }

    /** A started watch; closing it means the handler is done and no longer cares. */
    public interface Watch extends AutoCloseable {
        @Override
        void close();
    }

    private Deadline interruptAfter(Thread t, Duration d) {
        Deadline deadline = new Deadline(t);
        deadline.task = timer.schedule(deadline, d.toMillis(), TimeUnit.MILLISECONDS);
        return deadline;
    }

    /**
     * One armed interrupt. Firing and disarming exclude each other, so once {@link #disarm} returns
     * no interrupt can arrive late; one that fired between the guarded read's end and the disarm is
     * cleared there, so it never reaches the handler's later waits.
     */
    private static final class Deadline implements Runnable {
        private final Thread thread;
        private boolean disarmed;
        private boolean fired;
        volatile ScheduledFuture<?> task;

        Deadline(Thread thread) {
            this.thread = thread;
        }

        @Override
        public synchronized void run() {
            if (disarmed) return;
            fired = true;
            thread.interrupt();
        }

        synchronized void disarm() {
            disarmed = true;
            ScheduledFuture<?> t = task;
            if (t != null) t.cancel(false);
            if (fired && Thread.currentThread() == thread) Thread.interrupted();
        }
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
