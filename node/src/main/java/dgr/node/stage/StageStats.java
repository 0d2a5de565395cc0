package dgr.node.stage;

import java.util.List;
import java.util.concurrent.atomic.LongAdder;

/**
 * What a stage reports (capabilities, /metrics): sessions held, state and kept-row bytes, downstream
 * neighbours, batches run and the time its span computed. Written by the stage's loop, read anywhere.
 */
public final class StageStats {
    private final LongAdder batches = new LongAdder();
    private final LongAdder rows = new LongAdder();
    private final LongAdder busyNanos = new LongAdder();
    private final LongAdder replayedRows = new LongAdder();
    private final long startedNanos = System.nanoTime();
    private volatile int sessions;
    private volatile long stateBytes, keptBytes;
    private volatile List<String> downstream = List.of();
    private final RecentNanos rowTransits = new RecentNanos(1024);

    void batch(int n, long nanos) {
        batches.increment();
        rows.add(n);
        busyNanos.add(nanos);
    }

    /** One decode row's way from the upstream stage's hand-off to this stage's forward starting on it. */
    void rowTransit(long nanos) { rowTransits.add(nanos); }

    /** Median of the last 1024 {@link #rowTransit}s, or -1 when none came from a process on this clock. */
    public long rowTransitP50() { return rowTransits.median(); }

    /** Rows recomputed from a replay after a failover (the dead span's work done again). */
    void replayed(int n) { replayedRows.add(n); }

    void state(int sessions, long stateBytes, long keptBytes, List<String> downstream) {
        this.sessions = sessions;
        this.stateBytes = stateBytes;
        this.keptBytes = keptBytes;
        this.downstream = downstream;
    }

    public int sessions() { return sessions; }
    public long stateBytes() { return stateBytes; }
    /** Boundary rows kept for a replay, counted apart from (and in addition to) the state bytes. */
    public long keptBytes() { return keptBytes; }
    public List<String> downstream() { return downstream; }
    public long batches() { return batches.sum(); }
    public long rows() { return rows.sum(); }
    public long busyNanos() { return busyNanos.sum(); }
    public long replayedRows() { return replayedRows.sum(); }
    /** Nanoseconds since the stage started: the clock its busy time is measured against. */
    public long clockNanos() { return System.nanoTime() - startedNanos; }

    /** Fraction of the time since start the span was not computing: the stage's share of the pipeline's bubble. */
    public double idleFraction() {
        long up = System.nanoTime() - startedNanos;
        return up <= 0 ? 0 : Math.max(0, 1 - (double) busyNanos.sum() / up);
    }
}
