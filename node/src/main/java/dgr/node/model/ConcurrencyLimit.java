package dgr.node.model;

/**
 * The running-session cap in force for one model (its scheduler's {@code maxBatchSessions}) and where it
 * came from, so the capability report can say which limit applies and why.
 *
 * @param maxRunningSessions the cap
 * @param source             {@code operator} (an explicit flag), {@code saturation} (a loaded
 *                           recommendation for this model's artifact and recipe) or {@code default}
 *                           (the scheduler's configured value: no measurement exists)
 * @param detail             a sentence naming the flag, the file and measurement, or the default
 */
public record ConcurrencyLimit(int maxRunningSessions, Source source, String detail) {
    public enum Source { OPERATOR, SATURATION, DEFAULT }

    public ConcurrencyLimit {
        if (maxRunningSessions < 1) throw new IllegalArgumentException("the cap must be >= 1, got " + maxRunningSessions);
        if (source == null) throw new IllegalArgumentException("source is required");
    }

    public String sourceName() { return source.name().toLowerCase(java.util.Locale.ROOT); }
}
