package dgr.node.http;

import io.helidon.common.buffers.DataReader;
import io.helidon.http.Headers;
import io.helidon.http.HttpPrologue;
import io.helidon.webserver.ConnectionContext;
import io.helidon.webserver.WebServer;
import io.helidon.webserver.WebServerConfig;
import io.helidon.webserver.http1.Http1Config;
import io.helidon.webserver.ProtocolConfigs;
import io.helidon.webserver.http1.Http1ConnectionListener;
import io.helidon.webserver.http1.Http1ConnectionProvider;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * The listener's defences, set on Helidon's builder ({@link #configure}): the connection cap
 * ({@link ConnectionCap}: over it a connection is answered 503 at once) and idle timeout
 * ({@link ListenerLimits}), OpenAI-shaped bodies on Helidon's own error answers
 * ({@link TransportErrors}), the header deadline, and the connection watch.
 *
 * <p>Helidon reads each HTTP/1 connection on one virtual thread and runs the route on that same
 * thread. This guard hears on that thread when a request's first bytes arrive ({@link GuardedContext}),
 * each request line and each completed head (it is a receive listener): from the first byte to the
 * end of the head, and while a handler reads a body ({@link #deadline}), a timer interrupts the
 * thread when the header timeout passes, which closes the socket. Helidon's own idle timeout covers
 * the wait for a request's first byte.
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
    /** Set on a connection's thread while a handler reads a body: those bytes are not a new request. */
    private final ThreadLocal<Boolean> readingBody = new ThreadLocal<>();
    private final ClientFaultLog faults;
    private final ListenerLimits.Caps caps;
    private volatile ConnectionCap cap;
    /** Connections refused, over every listener this guard configured (a restarted one counts on). */
    private final java.util.concurrent.atomic.LongAdder refused = new java.util.concurrent.atomic.LongAdder();

    public ConnectionGuard(ListenerLimits limits, ClientFaultLog faults) {
        this.limits = limits;
        this.faults = faults;
        this.caps = limits.caps();
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "dgr-connection-deadlines");
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * Helidon 4.5 answers {@code Connection: close} but then reads the connection on until the client
     * closes it (or the idle timeout): this send listener marks the connection when an answer goes out
     * that closes it (the request or the handler said so), and its reader ({@link GuardedContext}) then
     * ends it after the answer.
     */
    private static final Http1ConnectionListener CLOSE_AFTER = new Http1ConnectionListener() {
        @Override
        public void headers(ConnectionContext ctx, Headers headers) {
            if (ctx instanceof GuardedContext g) g.answering(headers.containsToken(io.helidon.http.HeaderValues.CONNECTION_CLOSE));
        }
    };

    /** Applies the limits, the error bodies and this listener to a web server under construction. */
    public WebServerConfig.Builder configure(WebServerConfig.Builder b) {
        Duration idle = limits.idleTimeout();
        // Helidon checks idleness every period: a tenth of the timeout keeps the overshoot small.
        Duration period = Duration.ofMillis(Math.max(100, idle.toMillis() / 10));
        Http1Config http1 = Http1Config.builder().addReceiveListener(this).addSendListener(CLOSE_AFTER).build();
        // One cap per listener built: a restarted listener (ListenerWatch) starts counting afresh, as its
        // predecessor's connections are closed with it.
        ConnectionCap c = new ConnectionCap(new Http1ConnectionProvider().create(WebServer.DEFAULT_SOCKET_NAME, http1,
                ProtocolConfigs.create(List.of(http1))), this, caps.served(), refused);
        this.cap = c;
        return b.maxTcpConnections(caps.accepted())
                .idleConnectionTimeout(idle)
                .idleConnectionPeriod(period)
                .errorHandling(e -> e.includeEntity(true))
                .directHandlers(TransportErrors.handlers(faults, this::readingHead))
                // Only this HTTP/1 selector: with one Helidon skips sniffing the first bytes, so a silent
                // connection counts as idle from its start, and a request line that is not HTTP gets a 400.
                .protocolsDiscoverServices(false)
                .addConnectionSelector(c);
    }

    /** Connections served at once (over it, refused with a 503). */
    public int maxConnections() { return caps.served(); }

    /** Connections open and served now. */
    public int openConnections() {
        ConnectionCap c = cap;
        return c == null ? 0 : c.open();
    }

    /** Connections answered 503 for being over the cap since start (over every listener this guard configured). */
    public long refusedConnections() { return refused.sum(); }

    ClientFaultLog faults() { return faults; }

    /**
     * True on a connection's thread between its request line and the end of its head: a failure
     * there is the client's (Helidon reports a connection closed mid-head as an internal error).
     */
    boolean readingHead() {
        return headDeadline.get() != null;
    }

    @Override
    public void prologue(ConnectionContext ctx, HttpPrologue prologue) {
        // Armed already when the request's first bytes were read; else they came with the previous request's.
        if (headDeadline.get() == null) headDeadline.set(interruptAfter(Thread.currentThread(), limits.headerTimeout()));
    }

    /**
     * Bytes arrived on a connection's own thread ({@link GuardedContext}): outside a head and a body,
     * they begin a request, and its head must be complete within the header timeout from now.
     */
    void bytesArrived() {
        if (headDeadline.get() != null || readingBody.get() != null) return;
        headDeadline.set(interruptAfter(Thread.currentThread(), limits.headerTimeout()));
    }

    /** The connection this thread read has ended: nothing armed may outlive it. */
    void connectionEnded() {
        Deadline d = headDeadline.get();
        if (d != null) d.disarm();
        headDeadline.remove();
        readingBody.remove();
        connection.remove();
    }

    /**
     * Reads and drops what a refused connection's client sends until its request head has ended (and it
     * announced no body), it closes, or {@code linger} passes (then the interrupt closes the socket):
     * closing with unread bytes would reset the connection, and the client could lose the answer.
     */
    void drainFor(DataReader reader, Duration linger) {
        Deadline d = interruptAfter(Thread.currentThread(), linger);
        RequestHeadScan head = new RequestHeadScan();
        try {
            while (!head.endedWithoutBody()) {
                reader.ensureAvailable();
                head.scan(reader.readBytes(reader.available()));
            }
        } catch (RuntimeException closedOrCut) {
            // end of stream, or the linger's interrupt closed the socket: either way done
        } finally {
            d.disarm();
        }
    }

    @Override
    public void headers(ConnectionContext ctx, Headers headers) {
        Deadline d = headDeadline.get();
        if (d != null) d.disarm();
        headDeadline.remove();
        connection.set(ctx);
        if (ctx instanceof GuardedContext g && headers.containsToken(io.helidon.http.HeaderValues.CONNECTION_CLOSE)) {
            g.clientAskedClose();
        }
    }

    /**
     * Runs {@code read} (a handler reading its request body) under the header timeout: past it the
     * thread is interrupted, the socket closed, and {@code read} fails.
     */
    public <T> T deadline(java.util.function.Supplier<T> read) {
        Deadline d = interruptAfter(Thread.currentThread(), limits.headerTimeout());
        readingBody.set(Boolean.TRUE);
        try {
            return read.get();
        } finally {
            readingBody.remove();
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
