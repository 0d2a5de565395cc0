package dgr.bench.metrics;

import dgr.bench.target.RequestRecord;
import java.util.List;

/**
 * How steady a level's output throughput was: the tokens that arrived in each of {@link #WINDOWS}
 * equal windows over the middle 80% of the level's token timeline (the ramp-up and the closed loop's
 * draining tail left out), as tokens per second. A level whose windows differ a lot was too short, or the
 * machine was busy with something else: its throughput should not be trusted to one digit.
 *
 * @param minTokensPerS  the slowest window
 * @param maxTokensPerS  the fastest window
 * @param relative       (max − min) ÷ mean of the windows; 0 = perfectly steady
 */
public record ThroughputSpread(double minTokensPerS, double maxTokensPerS, double relative) {
    public static final int WINDOWS = 4;

    /** Null when the level has too few tokens to say (fewer than 8 per window). */
    public static ThroughputSpread of(List<RequestRecord> records) {
        long first = Long.MAX_VALUE, last = Long.MIN_VALUE, tokens = 0;
        for (RequestRecord r : records) {
            for (long t : r.tokenNanos()) {
                first = Math.min(first, t);
                last = Math.max(last, t);
                tokens++;
            }
        }
        if (tokens < 8L * WINDOWS / 0.8 || last <= first) return null;
        long from = first + (last - first) / 10;
        long to = last - (last - first) / 10;
        double width = (to - from) / (double) WINDOWS;
        long[] counts = new long[WINDOWS];
        for (RequestRecord r : records) {
            for (long t : r.tokenNanos()) {
                if (t < from || t >= to) continue;
                counts[(int) Math.min(WINDOWS - 1, (t - from) / width)]++;
            }
        }
        double min = Double.MAX_VALUE, max = 0, sum = 0;
        for (long c : counts) {
            double rate = c / (width / 1e9);
            min = Math.min(min, rate);
            max = Math.max(max, rate);
            sum += rate;
        }
        double mean = sum / WINDOWS;
        return new ThroughputSpread(min, max, mean > 0 ? (max - min) / mean : 0);
    }
}
