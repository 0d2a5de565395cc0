package dgr.node.http;

import java.lang.management.ManagementFactory;
import java.time.Duration;

/**
 * What one client connection may hold of the node: how many connections are open at once, how long
 * a connection may sit idle (between requests, or before its first request line is complete), and
 * how long the rest of a request's head and its body may take to arrive once the request line is in.
 *
 * @param maxConnections most open connections; beyond it new ones wait in the listen backlog until a
 *                       slot frees, never taking a file descriptor (so the listener cannot run out)
 * @param idleTimeout    a connection with no request in progress longer than this is closed
 * @param headerTimeout  the headers and the body of one request must arrive within this, counted from
 *                       its request line (a slow-loris client is cut off)
 */
public record ListenerLimits(int maxConnections, Duration idleTimeout, Duration headerTimeout) {
    public static final int DEFAULT_MAX_CONNECTIONS = 1024;
    public static final Duration DEFAULT_IDLE_TIMEOUT = Duration.ofSeconds(30);
    public static final Duration DEFAULT_HEADER_TIMEOUT = Duration.ofSeconds(10);
    /**
     * File descriptors kept free of connections for everything else the process opens (model files,
     * the stage and tracker channels, logs, the JDK's own), above those open when the node starts.
     */
    static final int DESCRIPTOR_RESERVE = 64;

    public ListenerLimits {
        if (maxConnections < 1) throw new IllegalArgumentException("--max-connections must be at least 1, got " + maxConnections);
        positive(idleTimeout, "--idle-timeout");
        positive(headerTimeout, "--header-timeout");
    }

    private static void positive(Duration d, String flag) {
        if (d == null || d.isNegative() || d.isZero()) throw new IllegalArgumentException(flag + " must be positive, got " + d);
    }

    public static ListenerLimits defaults() {
        return new ListenerLimits(DEFAULT_MAX_CONNECTIONS, DEFAULT_IDLE_TIMEOUT, DEFAULT_HEADER_TIMEOUT);
    }

    public ListenerLimits withMaxConnections(int n) { return new ListenerLimits(n, idleTimeout, headerTimeout); }

    public ListenerLimits withIdleTimeout(Duration d) { return new ListenerLimits(maxConnections, d, headerTimeout); }

    public ListenerLimits withHeaderTimeout(Duration d) { return new ListenerLimits(maxConnections, idleTimeout, d); }

    /**
     * The connection cap in force: {@link #maxConnections}, lowered where the process's descriptor
     * limit could not hold that many sockets beside what is open now and {@link #DESCRIPTOR_RESERVE}.
     * Helidon 4.5's listener stops for good when accept fails (EMFILE); holding connections under
     * the limit is what keeps accept from failing.
     */
    public int effectiveMaxConnections() {
        long room = descriptorRoom();
        return room < 0 ? maxConnections : (int) Math.max(1, Math.min(maxConnections, room - DESCRIPTOR_RESERVE));
    }

    /** Free descriptors (limit minus open), or -1 where the platform does not say. */
    static long descriptorRoom() {
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.UnixOperatingSystemMXBean unix) {
            return unix.getMaxFileDescriptorCount() - unix.getOpenFileDescriptorCount();
        }
        return -1;
    }
}
