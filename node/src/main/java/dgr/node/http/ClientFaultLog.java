package dgr.node.http;

import java.util.concurrent.atomic.AtomicLong;

/**
 * One log line for a client's fault (a malformed request, a connection cut mid-request), never a
 * stack trace, and at most one line per {@code interval}: a flood of bad requests must not flood
 * the log (or the disk) too. Lines that were held back are counted in the next one.
 */
public final class ClientFaultLog {
    private static final System.Logger LOG = System.getLogger("dgr.node.http.ClientFaults");

    private final long intervalNanos;
    private final AtomicLong nextLineAt = new AtomicLong(Long.MIN_VALUE);
    private final AtomicLong heldBack = new AtomicLong();
    private final AtomicLong total = new AtomicLong();

    public ClientFaultLog(java.time.Duration interval) {
        this.intervalNanos = interval.toNanos();
    }

    /** Records one fault: {@code what} is one line (status, reason, peer), no exception text beyond its message. */
    public void fault(String what) {
        total.incrementAndGet();
        long now = System.nanoTime();
        long next = nextLineAt.get();
        if ((next == Long.MIN_VALUE || now - next >= 0) && nextLineAt.compareAndSet(next, now + intervalNanos)) {
            long held = heldBack.getAndSet(0);
            LOG.log(System.Logger.Level.INFO, "client fault: " + oneLine(what)
                    + (held > 0 ? " (" + held + " more since the last line)" : ""));
        } else {
            heldBack.incrementAndGet();
        }
    }

    /** Faults recorded since start, logged or not. */
    public long total() { return total.get(); }

    private static String oneLine(String s) {
        String t = s == null ? "" : s.replaceAll("[\\r\\n\\t]+", " ");
        return t.length() > 300 ? t.substring(0, 297) + "..." : t;
    }
}
