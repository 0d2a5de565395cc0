package dgr.node.stage;

/**
 * A link's measured time per row of a reply, kept apart for small flushes (decode rows: a few per
 * session) and large ones (prompt chunks, a replay), so a reply's {@link StepClock} deadline comes from
 * replies of its own kind. A stage reads its weights once per batch, so a chunk's rows cost a fraction of
 * a decode row each: with one rate, learnt from decode replies, a 3-stage llama-1b route at c=8 waited
 * 5.4 s (25.8 ms per row × 50 rows ahead × 4) before it declared a stage hung during a prompt, against
 * 0.8-1.4 s during decode. Not thread-safe: its link synchronises.
 */
final class ReplyRates {
    /** Rows ahead above which a flush is large. */
    static final int LARGE_ROWS = 16;

    private final double[] nanosPerRow = new double[2];
    private final boolean[] measured = new boolean[2];

    ReplyRates(double initialNanosPerRow) {
        nanosPerRow[0] = nanosPerRow[1] = initialNanosPerRow;
    }

    private static int kind(int rowsAhead) { return rowsAhead > LARGE_ROWS ? 1 : 0; }

    /** A reply came {@code rttNanos} after its flush was sent, behind {@code rowsAhead} rows. */
    void update(long rttNanos, int rowsAhead) {
        int k = kind(rowsAhead);
        nanosPerRow[k] = StepClock.update(nanosPerRow[k], measured[k], rttNanos, rowsAhead);
        measured[k] = true;
    }

    boolean measured() { return measured[0] || measured[1]; }

    /**
     * The time per row a flush behind {@code rowsAhead} rows is given: its kind's; before a reply of its
     * kind came, the other kind's (a large flush then gets the small flushes' rate, which overstates
     * its time, as every flush's did before the kinds were kept apart).
     */
    double nanosPerRow(int rowsAhead) {
        int k = kind(rowsAhead);
        return measured[k] || !measured[1 - k] ? nanosPerRow[k] : nanosPerRow[1 - k];
    }

    /** The small flushes' rate (else the large ones'): what a new link to the same span starts from. */
    double known() { return measured[0] ? nanosPerRow[0] : nanosPerRow[1]; }

    /** Starts from a rate measured on another link to the same span, unless this one measured its own. */
    void seed(double perRow) {
        if (measured()) return;
        nanosPerRow[0] = perRow;
        measured[0] = true;
    }
}
