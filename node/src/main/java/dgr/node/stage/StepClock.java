package dgr.node.stage;

/**
 * The deadline of a reply from a downstream link, derived from the step time measured on that link:
 * {@code floor + factor × (measured nanoseconds per row) × (rows the reply waits behind)}. Before
 * the first measurement the per-row time is {@code initialNanosPerRow}. A reply's time per row
 * updates an exponential average (weight 1/4), so the deadline follows the route's real speed.
 */
public record StepClock(long floorNanos, double factor, long initialNanosPerRow) {
    public StepClock {
        if (floorNanos <= 0 || factor < 1 || initialNanosPerRow <= 0) {
            throw new IllegalArgumentException("floor and initial time must be positive, factor >= 1");
        }
    }

    /** 250 ms floor, 4 × the measured time, 50 ms per row before anything is measured. */
    public static StepClock defaults() {
        return new StepClock(250_000_000L, 4.0, 50_000_000L);
    }

    long deadline(long sentNanos, double nanosPerRow, int rowsAhead) {
        return sentNanos + floorNanos + (long) (factor * nanosPerRow * Math.max(1, rowsAhead));
    }

    static double update(double average, boolean measured, long rttNanos, int rows) {
        double sample = (double) rttNanos / Math.max(1, rows);
        return measured ? 0.75 * average + 0.25 * sample : sample;
    }
}
