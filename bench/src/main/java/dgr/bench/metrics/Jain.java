package dgr.bench.metrics;

/** Jain's fairness index (Σx)² / (n·Σx²): 1 when all equal, 1/n when one gets everything. */
public final class Jain {
    private Jain() {}

    public static double index(double[] x) {
        if (x.length == 0) return Double.NaN;
        double sum = 0, sq = 0;
        for (double v : x) {
            sum += v;
            sq += v * v;
        }
        return sq == 0 ? 1.0 : sum * sum / (x.length * sq);
    }
}
