package dgr.bench.metrics;

/**
 * One fairness or starvation check with its threshold. {@code status} is {@code pass}, {@code fail},
 * {@code not_applicable} (the setup cannot show it, e.g. one tenant) or {@code unavailable} (the
 * target does not expose what it needs); only {@code fail} fails the run.
 *
 * @param name       stable id, e.g. {@code jain_index}
 * @param value      measured value (NaN when not measured)
 * @param comparison {@code >=} or {@code <=}: how value must relate to threshold to pass
 * @param threshold  the bound
 * @param unit       unit of value and threshold
 * @param detail     what was measured and why the threshold is what it is
 */
public record Check(String name, String status, double value, String comparison, double threshold, String unit,
                   String detail) {
    public static Check evaluate(String name, double value, String comparison, double threshold, String unit,
                                 String detail) {
        boolean ok = comparison.equals(">=") ? value >= threshold : value <= threshold;
        return new Check(name, ok ? "pass" : "fail", value, comparison, threshold, unit, detail);
    }

    public static Check skipped(String name, String status, String detail) {
        return new Check(name, status, Double.NaN, "", Double.NaN, "", detail);
    }

    public boolean failed() { return status.equals("fail"); }
}
