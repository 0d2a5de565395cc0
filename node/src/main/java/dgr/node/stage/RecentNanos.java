package dgr.node.stage;

import java.util.Arrays;

/** The last {@code n} durations recorded (a ring), for a median over recent traffic. Thread-safe. */
final class RecentNanos {
    private final long[] ring;
    private int next, size;

    RecentNanos(int n) { this.ring = new long[n]; }

    synchronized void add(long nanos) {
        ring[next] = nanos;
        next = (next + 1) % ring.length;
        size = Math.min(size + 1, ring.length);
    }

    /** The median of what is kept, or -1 when nothing was recorded. */
    synchronized long median() {
        if (size == 0) return -1;
        long[] copy = Arrays.copyOf(ring, size);
        Arrays.sort(copy);
        return copy[size / 2];
    }
}
