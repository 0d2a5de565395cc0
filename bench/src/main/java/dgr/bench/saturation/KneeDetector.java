package dgr.bench.saturation;

/**
 * The two-segment knee rule (docs/bench.md): fit two least-squares lines to throughput against
 * concurrency, split at every interior point (each segment holds at least two points and the
 * segments share the split point), keep the split with the smallest total squared error; the knee
 * is that split point when the second segment's slope is below {@code slopeRatio} × the first's.
 * With fewer than {@link #MIN_POINTS} points, or when the second slope stays at or above that
 * fraction (throughput still rising about linearly), there is no knee: the rule does not invent one.
 * If the first segment does not rise at all, throughput never grew with concurrency and the knee is
 * the smallest concurrency tested.
 */
public final class KneeDetector {
    public static final int MIN_POINTS = 4;

    /**
     * @param status     {@code knee} or {@code no_knee}
     * @param knee       the knee's concurrency, or null
     * @param slope1     first segment's slope (throughput per added session), NaN if not fitted
     * @param slope2     second segment's slope
     * @param reason     why, in words
     */
    public record Result(String status, Integer knee, double slope1, double slope2, String reason) {}

    private final double slopeRatio;

    public KneeDetector(double slopeRatio) {
        if (!(slopeRatio > 0 && slopeRatio < 1)) throw new IllegalArgumentException("knee slope ratio must be in (0, 1)");
        this.slopeRatio = slopeRatio;
    }

    public double slopeRatio() { return slopeRatio; }

    /** @param x concurrency levels, ascending; @param y throughput at each */
    public Result detect(int[] x, double[] y) {
        int n = x.length;
        if (n < MIN_POINTS) {
            return new Result("no_knee", null, Double.NaN, Double.NaN, "too few points: " + n + " < " + MIN_POINTS
                    + "; add levels (e.g. 3, 6, 12) to resolve a knee");
        }
        double best = Double.POSITIVE_INFINITY;
        int split = -1;
        double s1 = Double.NaN, s2 = Double.NaN;
        for (int k = 1; k <= n - 2; k++) {
            double[] a = fit(x, y, 0, k);
            double[] b = fit(x, y, k, n - 1);
            double sse = a[2] + b[2];
            if (sse < best - 1e-12) {
                best = sse;
                split = k;
                s1 = a[0];
                s2 = b[0];
            }
        }
        if (s1 <= 0) {
            return new Result("knee", x[0], s1, s2, "throughput does not grow with concurrency from " + x[0]);
        }
        if (s2 < slopeRatio * s1) {
            return new Result("knee", x[split], s1, s2, String.format(
                    "second slope %.4g < %.0f%% of first slope %.4g", s2, slopeRatio * 100, s1));
        }
        return new Result("no_knee", null, s1, s2, String.format(
                "still rising: second slope %.4g >= %.0f%% of first slope %.4g; add higher levels", s2,
                slopeRatio * 100, s1));
    }

    /** Least squares over points [from, to]: {slope, intercept, squared error}. */
    static double[] fit(int[] x, double[] y, int from, int to) {
        int m = to - from + 1;
        double sx = 0, sy = 0, sxx = 0, sxy = 0;
        for (int i = from; i <= to; i++) {
            sx += x[i];
            sy += y[i];
            sxx += (double) x[i] * x[i];
            sxy += x[i] * y[i];
        }
        double den = m * sxx - sx * sx;
        double slope = den == 0 ? 0 : (m * sxy - sx * sy) / den;
        double icpt = (sy - slope * sx) / m;
        double sse = 0;
        for (int i = from; i <= to; i++) {
            double e = y[i] - (slope * x[i] + icpt);
            sse += e * e;
        }
        return new double[] {slope, icpt, sse};
    }
}
