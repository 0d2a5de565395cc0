package dgr.node.http;

import io.helidon.webserver.WebServer;
import java.io.IOException;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.ServerSocketChannel;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntFunction;

/**
 * Keeps the node listening. Helidon 4.5's listener stops for good when accept fails (EMFILE: the
 * process ran out of file descriptors), while the process lives on and {@code /health} is refused;
 * a supervisor that restarts on exit never learns of it. This watch looks every {@code period}
 * whether anything still listens on the node's address and, when nothing does, builds a new server
 * on the same port, looking again with a growing pause while that fails (descriptors still short).
 *
 * <p>The look is a bind, not a connection: binding the address (with SO_REUSEADDR, as Helidon binds
 * it) fails with "address in use" exactly while a socket listens there (Linux), it costs no
 * connection slot, and it tells nothing when it cannot get a descriptor either (then it looks again
 * later). A server that stopped this way leaves Helidon's listener thread parked for good (its stop
 * waits on itself): one idle thread per restart, which {@code System.exit} does not wait for.
 */
public final class ListenerWatch implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(ListenerWatch.class.getName());
    static final Duration DEFAULT_PERIOD = Duration.ofSeconds(1);
    private static final Duration MAX_PAUSE = Duration.ofSeconds(5);

    private final IntFunction<WebServer> build;
    private final InetSocketAddress address;
    private final Duration period;
    private final AtomicLong restarts = new AtomicLong();
    private final Thread thread;
    private volatile WebServer web;
    private volatile boolean closed;
    /**
     * Ends the watch when the JVM begins to exit: Helidon's own shutdown hook stops the server while
     * the node's close has not run yet, and the watch took that for a dead listener and started a new
     * one on the way out (seen on every Ctrl-C / SIGTERM of a node).
     */
    private final Thread onExit = Thread.ofPlatform().unstarted(() -> closed = true);

    private ListenerWatch(IntFunction<WebServer> build, WebServer first, String host, Duration period) {
        this.build = build;
        this.web = first;
        this.address = new InetSocketAddress(host, first.port());
        this.period = period;
        this.thread = Thread.ofPlatform().daemon().name("dgr-listener-watch").unstarted(this::watch);
    }

    /**
     * Builds and starts the server on {@code port} (0: any free one), then watches it on the port it got.
     *
     * @param build an unstarted server for a port; called again for each restart
     */
    public static ListenerWatch start(String host, int port, IntFunction<WebServer> build) {
        return start(host, port, build, DEFAULT_PERIOD);
    }

    static ListenerWatch start(String host, int port, IntFunction<WebServer> build, Duration period) {
        WebServer first = build.apply(port);
        first.start();
        if (!first.isRunning()) { // Helidon logs why (the port is taken, say) and returns
            throw new IllegalStateException("could not listen on " + host + ":" + port + " (see the log line before this one)");
        }
        ListenerWatch w = new ListenerWatch(build, first, host, period);
        Runtime.getRuntime().addShutdownHook(w.onExit);
        w.thread.start();
        return w;
    }

    /** The port the node listens on (the same across restarts). */
    public int port() { return address.getPort(); }

    /** Times the listener was found stopped and started again. */
    public long restarts() { return restarts.get(); }

    private void watch() {
        long pause = period.toMillis();
        int attempts = 0;
        try {
            while (!closed) {
                Thread.sleep(pause);
                if (closed || !nothingListens()) continue;
                // Only after a probe bound the address (so a descriptor was free a moment ago) is a server
                // built: each one Helidon builds keeps a timer thread for good, started or not.
                if (attempts++ == 0) stopDead();
                if (startAgain(attempts)) {
                    attempts = 0;
                    pause = period.toMillis();
                } else {
                    pause = Math.min(pause * 2, MAX_PAUSE.toMillis());
                }
            }
        } catch (InterruptedException closing) {
            // close() ends the watch
        }
    }

    /** True only when the address is certainly free: a bind succeeded. */
    private boolean nothingListens() {
        try (ServerSocketChannel probe = ServerSocketChannel.open()) {
            probe.setOption(StandardSocketOptions.SO_REUSEADDR, true);
            probe.bind(address);
            return true;
        } catch (BindException inUse) {
            return false;
        } catch (IOException | RuntimeException cannotTell) {
            return false; // no descriptor for the probe, say: look again next period
        }
    }

    private void stopDead() {
        LOG.log(System.Logger.Level.WARNING, "the listener on " + address + " stopped accepting connections"
                + " (see Helidon's log line before this one); starting it again");
        try {
            web.stop(); // releases what the stopped server still holds; its socket is closed already
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.DEBUG, "stopping the dead listener: " + e);
        }
    }

    private boolean startAgain(int attempt) {
        WebServer next;
        try {
            next = build.apply(address.getPort());
            next.start(); // Helidon logs a failed bind and returns with the server not running
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "the listener on " + address + " could not start again (attempt "
                    + attempt + "): " + rootMessage(e) + "; retrying");
            return false;
        }
        if (!next.isRunning()) {
            LOG.log(System.Logger.Level.WARNING, "the listener on " + address + " could not start again (attempt "
                    + attempt + "); retrying");
            return false;
        }
        web = next;
        LOG.log(System.Logger.Level.WARNING, "the listener on " + address + " started again (restart "
                + restarts.incrementAndGet() + ", attempt " + attempt + ")");
        if (closed) next.stop();
        return true;
    }

    private static String rootMessage(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null && t.getCause() != t) t = t.getCause();
        return t.getClass().getSimpleName() + ": " + t.getMessage();
    }

    @Override
    public void close() {
        closed = true;
        try {
            Runtime.getRuntime().removeShutdownHook(onExit);
        } catch (IllegalStateException exiting) {
            // closed from a shutdown hook: the hook has run or runs now, and does no harm
        }
        thread.interrupt();
        try {
            thread.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        web.stop();
    }
}
