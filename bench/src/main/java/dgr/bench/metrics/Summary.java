package dgr.bench.metrics;

import java.util.Arrays;

/**
 * Mean and percentiles of a sample, in its unit. Percentiles interpolate linearly between closest
 * ranks (numpy's default, which vLLM's benchmark uses), so p50 ≤ p95 ≤ p99 ≤ max always holds.
 */
public record Summary(int count, double mean, double min, double p50, double p95, double p99, double max) {

    public static Summary of(double[] values) {
        double[] v = Arrays.stream(values).filter(x -> !Double.isNaN(x)).sorted().toArray();
        if (v.length == 0) return null;
        double sum = 0;
        for (double x : v) sum += x;
        return new Summary(v.length, sum / v.length, v[0], percentile(v, 50), percentile(v, 95), percentile(v, 99),
                v[v.length - 1]);
    }

    /** Linear interpolation between closest ranks of a sorted array. */
    public static double percentile(double[] sorted, double p) {
        if (sorted.length == 1) return sorted[0];
        double rank = p / 100.0 * (sorted.length - 1);
        int lo = (int) Math.floor(rank);
        int hi = Math.min(lo + 1, sorted.length - 1);
        return sorted[lo] + (rank - lo) * (sorted[hi] - sorted[lo]);
    }
}
