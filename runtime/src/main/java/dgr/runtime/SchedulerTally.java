package dgr.runtime;

import java.util.concurrent.atomic.LongAdder;

/**
 * A scheduler's totals since it started, counted from the loop and from submitting threads alike and
 * read by any thread as one {@link SchedulerCounters}.
 */
final class SchedulerTally {
    private final LongAdder submitted = new LongAdder();
    private final LongAdder admitted = new LongAdder();
    private final LongAdder rejected = new LongAdder();
    private final LongAdder finished = new LongAdder();
    private final LongAdder cancelled = new LongAdder();
    private final LongAdder failed = new LongAdder();

    void submitted() { submitted.increment(); }
    void admitted() { admitted.increment(); }
    void rejected() { rejected.increment(); }

    /** One session ended in {@code phase}: cancelled, failed, or else finished. */
    void ended(Phase phase) {
        switch (phase) {
            case CANCELLED -> cancelled.increment();
            case FAILED -> failed.increment();
            default -> finished.increment();
        }
    }

    SchedulerCounters snapshot(long iterations) {
        return new SchedulerCounters(submitted.sum(), admitted.sum(), rejected.sum(), finished.sum(), cancelled.sum(),
                failed.sum(), iterations);
    }
}
