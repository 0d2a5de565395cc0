package dgr.bench.target;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * The few things the benchmark reads from a Prometheus text exposition: sample values by series,
 * summed over labels other than {@code le}, and classic histograms rebuilt from their
 * {@code _bucket}, {@code _sum} and {@code _count} series. A node serving several models labels
 * every series by {@code model}; {@link #parse(String, String)} keeps one model's series (and the
 * unlabelled process-wide ones) so one model's numbers are not summed with another's.
 */
public final class PrometheusText {
    private final Map<String, Double> byName;
    private final Map<String, TreeMap<Double, Double>> buckets;
    /** Series name → its labels as written → value. */
    private final Map<String, Map<String, Double>> series;

    private PrometheusText(Map<String, Double> byName, Map<String, TreeMap<Double, Double>> buckets,
                           Map<String, Map<String, Double>> series) {
        this.byName = byName;
        this.buckets = buckets;
        this.series = series;
    }

    public static PrometheusText parse(String text) {
        return parse(text, null);
    }

    /**
     * @param model keep only series whose {@code model} label is this (series without a
     *              {@code model} label are kept); null keeps every series
     */
    public static PrometheusText parse(String text, String model) {
        Map<String, Double> byName = new LinkedHashMap<>();
        Map<String, TreeMap<Double, Double>> buckets = new LinkedHashMap<>();
        Map<String, Map<String, Double>> series = new LinkedHashMap<>();
        for (String raw : text.split("\n")) {
            String line = raw.strip();
            if (line.isEmpty() || line.startsWith("#")) continue;
            int brace = line.indexOf('{');
            int space = line.indexOf(' ');
            String name;
            String labels = "";
            String rest;
            if (brace >= 0 && (space < 0 || brace < space)) {
                int close = line.indexOf('}', brace);
                if (close < 0) continue;
                name = line.substring(0, brace);
                labels = line.substring(brace + 1, close);
                rest = line.substring(close + 1).strip();
            } else {
                if (space < 0) continue;
                name = line.substring(0, space);
                rest = line.substring(space + 1).strip();
            }
            if (model != null) {
                String m = label(labels, "model");
                if (m != null && !m.equals(model)) continue;
            }
            String[] parts = rest.split("\\s+");
            double value;
            try {
                value = parseValue(parts[0]);
            } catch (NumberFormatException e) {
                continue;
            }
            if (name.endsWith("_bucket")) {
                String le = label(labels, "le");
                if (le == null) continue;
                buckets.computeIfAbsent(name.substring(0, name.length() - 7), k -> new TreeMap<>())
                        .merge(parseValue(le), value, Double::sum);
            } else {
                byName.merge(name, value, Double::sum);
                series.computeIfAbsent(name, k -> new LinkedHashMap<>()).merge(labels, value, Double::sum);
            }
        }
        return new PrometheusText(byName, buckets, series);
    }

    private static double parseValue(String s) {
        return switch (s) {
            case "+Inf", "Inf" -> Double.POSITIVE_INFINITY;
            case "-Inf" -> Double.NEGATIVE_INFINITY;
            case "NaN" -> Double.NaN;
            default -> Double.parseDouble(s);
        };
    }

    private static String label(String labels, String key) {
        for (String kv : labels.split(",")) {
            int eq = kv.indexOf('=');
            if (eq > 0 && kv.substring(0, eq).strip().equals(key)) return kv.substring(eq + 1).strip().replace("\"", "");
        }
        return null;
    }

    /** A series' values by the value of its label {@code key} (series without it are left out). */
    public Map<String, Double> byLabel(String name, String key) {
        Map<String, Double> out = new TreeMap<>();
        series.getOrDefault(name, Map.of()).forEach((labels, v) -> {
            String k = label(labels, key);
            if (k != null) out.merge(k, v, Double::sum);
        });
        return out;
    }

    /** A series' value summed over labels, or null when absent. */
    public Double value(String name) { return byName.get(name); }

    /** Cumulative bucket counts by upper bound, or null when the histogram is absent. */
    public TreeMap<Double, Double> histogram(String name) {
        TreeMap<Double, Double> b = buckets.get(name);
        return b == null ? null : new TreeMap<>(b);
    }

    /** {@code later - earlier} for a histogram's cumulative buckets (both must exist). */
    public static TreeMap<Double, Double> delta(TreeMap<Double, Double> later, TreeMap<Double, Double> earlier) {
        TreeMap<Double, Double> out = new TreeMap<>();
        later.forEach((le, c) -> out.put(le, c - (earlier == null ? 0 : earlier.getOrDefault(le, 0.0))));
        return out;
    }

    /**
     * Quantile {@code q} of a cumulative histogram, interpolating linearly inside the bucket as
     * Prometheus' histogram_quantile does; NaN when empty.
     */
    public static double quantile(TreeMap<Double, Double> cumulative, double q) {
        if (cumulative.isEmpty()) return Double.NaN;
        double total = cumulative.lastEntry().getValue();
        if (total <= 0) return Double.NaN;
        double rank = q * total;
        double prevBound = 0, prevCount = 0;
        for (var e : cumulative.entrySet()) {
            if (e.getValue() >= rank) {
                if (e.getKey().isInfinite()) return prevBound; // above the largest finite bound
                double inBucket = e.getValue() - prevCount;
                double frac = inBucket <= 0 ? 1 : (rank - prevCount) / inBucket;
                return prevBound + (e.getKey() - prevBound) * frac;
            }
            prevBound = e.getKey();
            prevCount = e.getValue();
        }
        return prevBound;
    }
}
