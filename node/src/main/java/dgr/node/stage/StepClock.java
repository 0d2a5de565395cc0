package dgr.node.stage;

/**
 * The deadline of a reply from a downstream link, derived from the step time measured on that link:
 * {@code floor + factor × (measured nanoseconds per row) × (rows the reply waits behind)}. A
 * reply's time per row updates an exponential average (weight 1/4), so the deadline follows the
 * route's real speed; small flushes (decode rows) and large ones (prompt chunks) are timed apart
 * ({@link ReplyRates}). Before a link's first reply nothing is measured, and a fresh process's first
 * rows pay for class loading and compilation (seconds on a busy machine): that reply gets
 * {@code firstReplyNanos} plus {@code initialNanosPerRow} per row.
 */
public record StepClock(long floorNanos, double factor, long initialNanosPerRow, long firstReplyNanos) {
    public StepClock {
        if (floorNanos <= 0 || factor < 1 || initialNanosPerRow <= 0 || firstReplyNanos <= 0) {
            throw new IllegalArgumentException("floor and initial times must be positive, factor >= 1");
        }
    }

    /**
     * 250 ms floor, 4 × the measured time; before anything was measured 30 s plus 50 ms per row. A
     * head measures every link of its route (alternates too) with warm-up rows before its first
     * client, and a new link starts from the time measured on the others to the same span, so the
     * cold bound only covers a route's first seconds (a stage warms its kernels before it listens;
     * its first stream still loads gRPC's classes; a first llama-1b batch through a 1-thread stage took
     * over 10 s on 2 cores shared by 30 runnable threads).
     */
    public static StepClock defaults() {
        return new StepClock(250_000_000L, 4.0, 50_000_000L, 30_000_000_000L);
    }

    long deadline(long sentNanos, boolean measured, double nanosPerRow, int rowsAhead) {
        if (!measured) return sentNanos + firstReplyNanos + initialNanosPerRow * Math.max(1, rowsAhead);
        return sentNanos + floorNanos + (long) (factor * nanosPerRow * Math.max(1, rowsAhead));
    }

    /**
     * Pulse periods (or longest recent gaps, {@link Silence#unitNanos}) a stage may stay silent, past the
     * floor, before it counts as hung ({@link Pulses}).
     */
    static final int SILENT_PULSES = 3;

    /**
     * When a stage last heard from at {@code heardNanos} counts as hung: the floor (what the machine may
     * stall any process for) plus {@link #SILENT_PULSES} × {@code unitNanos} (its pulse period, or the
     * longest gap between its messages lately if longer). Its replies may take longer than that (a long
     * batch); its pulses may not.
     */
    long silentAfter(long heardNanos, long unitNanos) {
        return heardNanos + floorNanos + SILENT_PULSES * unitNanos;
    }

    static double update(double average, boolean measured, long rttNanos, int rows) {
        double sample = (double) rttNanos / Math.max(1, rows);
        return measured ? 0.75 * average + 0.25 * sample : sample;
    }
}
