package dgr.node.http;

import java.lang.management.ManagementFactory;
import java.time.Duration;

/**
 * What one client connection may hold of the node: how many connections are open at once, how long
 * a connection may sit idle (between requests, or before its first request line is complete), and
 * how long the rest of a request's head and its body may take to arrive once the request line is in.
 *
 * @param maxConnections most open connections served at once; one beyond it is accepted, answered 503
 *                       and closed at once ({@link ConnectionCap}); beyond that too (the refusal slots
 *                       busy) it waits in the listen backlog, never taking a file descriptor
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
     * The caps in force, from one reading of the process's descriptors: Helidon may hold
     * {@link Caps#accepted} connections open (it waits for a free one before it accepts), of which
     * {@link Caps#served} are served and the rest are being refused. Where the descriptor limit could
     * not hold {@link #maxConnections} sockets plus the refusal slots beside those open now and
     * {@link #DESCRIPTOR_RESERVE}, both are lowered (refusals keep at most a quarter). Helidon 4.5's
     * listener stops when accept fails (EMFILE): holding connections under the limit is what keeps
     * accept from failing ({@link ListenerWatch} restarts it if it stops anyway).
     */
    public Caps caps() {
        long room = descriptorRoom();
        long wanted = (long) maxConnections + refusalSlots();
        int accepted = room < 0 ? (int) Math.min(wanted, Integer.MAX_VALUE)
                : (int) Math.max(2, Math.min(wanted, room - DESCRIPTOR_RESERVE));
        int served = Math.max(1, Math.min(maxConnections, accepted - Math.min(refusalSlots(), Math.max(1, accepted / 4))));
        return new Caps(served, accepted);
    }

    /** Connections served at once, and accepted at once (served plus being refused). */
    public record Caps(int served, int accepted) {}

    /**
     * Connections that may be in the middle of a refusal at once (each holds its socket for at most
     * {@link ConnectionCap#LINGER}): a quarter of the cap, at least 16 and at most 256.
     */
    public int refusalSlots() {
        return Math.max(16, Math.min(256, maxConnections / 4));
    }

    /** Free descriptors (limit minus open), or -1 where the platform does not say. */
    static long descriptorRoom() {
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.UnixOperatingSystemMXBean unix) {
            return unix.getMaxFileDescriptorCount() - unix.getOpenFileDescriptorCount();
        }
        return -1;
    }
}
