package dgr.node.stage;

/**
 * What a link has heard from its stage, for telling a suspended stage from a busy one
 * ({@link Pulses}): when it last heard anything, how often the stage pulses, and the longest gap
 * between two messages lately (the longest of this window of {@link #WINDOW_NANOS} and the one
 * before). A stage counts as hung once it has been silent for the floor plus
 * {@link StepClock#SILENT_PULSES} times the longer of its pulse period and that gap: on a quiet
 * machine the pulses' own spacing, on a loaded one (every process there waits for a core, the
 * pulses arrive late and unevenly) what the load has been showing. Written by the link's transport
 * thread, read by the watchdog.
 */
final class Silence {
    /** How long a gap counts as recent: one or two of these windows. */
    static final long WINDOW_NANOS = 5_000_000_000L;

    private volatile long heard, periodNanos, gap, gapBefore, windowStart;

    Silence(long now) {
        heard = now;
        windowStart = now;
    }

    /** Something came at {@code now}; {@code pulsePeriodNanos} when it was a pulse, else 0. */
    void heard(long now, long pulsePeriodNanos) {
        // Gaps count once the stage pulses: before, a quiet stream says nothing about its load.
        if (periodNanos > 0) {
            if (now - windowStart > WINDOW_NANOS) {
                gapBefore = gap;
                gap = 0;
                windowStart = now;
            }
            long g = now - heard;
            if (g > gap) gap = g;
        }
        heard = now;
        if (pulsePeriodNanos > 0) periodNanos = pulsePeriodNanos;
    }

    /** When the stage was last heard from ({@link System#nanoTime}). */
    long heard() { return heard; }

    /** Whether the stage pulses (one of protocol 1 never does; a stream's first pulse may still be to come). */
    boolean pulses() { return periodNanos > 0; }

    long periodNanos() { return periodNanos; }

    /** The longest gap between two messages in this window and the one before. */
    long recentGapNanos() { return Math.max(gap, gapBefore); }

    /** The silence allowed per {@link StepClock#SILENT_PULSES}: the pulse period, or the longest recent gap if longer. */
    long unitNanos() { return Math.max(periodNanos, recentGapNanos()); }
}
