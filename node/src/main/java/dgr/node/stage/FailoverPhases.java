package dgr.node.stage;

/**
 * Where one failover's pause goes, as the head sees it (docs/stages.md, "What a failover costs"):
 * when the stage was declared dead (its stream broke, or a reply missed its deadline), when the head's
 * scheduler took the failure up, when the moved sessions' replay went down the new route, and when the
 * first and the last of them had their next token. Logged once every moved session has one (or ended),
 * as one line that {@code tools/stages/failover.sh} reads beside the moment it sent the signal.
 */
final class FailoverPhases {
    private static final System.Logger LOG = System.getLogger(FailoverPhases.class.getName());

    private final String address, reason;
    private final long detectedEpochMillis, detectedNanos;
    private long handledNanos, sentNanos, firstNanos;
    private int moved, waiting, rows;
    private final java.util.Set<String> to = new java.util.LinkedHashSet<>();

    FailoverPhases(String address, String reason, long detectedEpochMillis, long detectedNanos) {
        this.address = address;
        this.reason = reason;
        this.detectedEpochMillis = detectedEpochMillis;
        this.detectedNanos = detectedNanos;
    }

    void handled(long now) { handledNanos = now; }

    /** A session moved to {@code alternate}, its kept rows ({@code replayed}) queued for the replay. */
    void moved(String alternate, int replayed) {
        moved++;
        waiting++;
        rows += replayed;
        to.add(alternate);
    }

    void sent(long now) { sentNanos = now; }

    /** Whether every moved session has its next token (or ended). */
    boolean settled() { return waiting <= 0; }

    /** A moved session got its next token, or ended before it; logs the phases after the last one. */
    void next(long now) {
        if (firstNanos == 0) firstNanos = now;
        if (--waiting > 0) return;
        LOG.log(System.Logger.Level.WARNING, String.format(
                "failover phases: stage %s (%s) detected at epoch ms %d; taken up +%d ms; %d sessions moved to %s, %d rows replayed,"
                        + " sent +%d ms; first next token +%d ms, last +%d ms (after detection)",
                address, reason, detectedEpochMillis, ms(handledNanos), moved, String.join(",", to), rows, ms(sentNanos), ms(firstNanos), ms(now)));
    }

    private long ms(long at) { return (at - detectedNanos) / 1_000_000; }
}
