package dgr.bench.report;

import dgr.bench.metrics.LevelMetrics;
import dgr.bench.metrics.Summary;
import dgr.bench.target.RequestRecord;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Function;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.markers.SeriesMarkers;

/** The report's PNG plots (XChart, headless). Each method returns the file name it wrote in {@code dir}. */
public final class Plots {
    private static final int W = 720, H = 420;

    static {
        System.setProperty("java.awt.headless", "true");
    }

    private Plots() {}

    /** Plots for one run; {@code prefix} keeps runs apart. Returns (title, file name) pairs. */
    public static List<String[]> write(RunResult run, String prefix, Path dir) {
        List<String[]> out = new ArrayList<>();
        List<LevelMetrics> closed = run.levels().stream().filter(l -> l.mode().equals("closed")).toList();
        if (!closed.isEmpty()) {
            double[] x = closed.stream().mapToDouble(LevelMetrics::concurrency).toArray();
            XYChart t = chart("Throughput vs concurrency", "concurrency (clients)", "tokens / s");
            double[] output = closed.stream().mapToDouble(LevelMetrics::outputThroughput).toArray();
            line(t, "output_throughput", x, output);
            line(t, "total_token_throughput", x, closed.stream().mapToDouble(LevelMetrics::totalTokenThroughput).toArray());
            mark(t, run, x, closed.stream().mapToDouble(LevelMetrics::totalTokenThroughput).max().orElse(0));
            out.add(save(t, "Throughput vs concurrency", dir, prefix + "throughput.png"));

            XYChart l = chart("p95 latency vs concurrency", "concurrency (clients)", "ms");
            line(l, "ttft_ms p95", x, p95(closed, LevelMetrics::ttftMs));
            line(l, "itl_ms p95", x, p95(closed, LevelMetrics::itlMs));
            line(l, "tpot_ms p95", x, p95(closed, LevelMetrics::tpotMs));
            out.add(save(l, "p95 latency vs concurrency", dir, prefix + "latency-p95.png"));

            double[] occ = closed.stream().mapToDouble(m -> m.batch().occupancy() == null ? Double.NaN : m.batch().occupancy()).toArray();
            if (Arrays.stream(occ).anyMatch(v -> !Double.isNaN(v))) {
                XYChart o = chart("Batch occupancy vs concurrency", "concurrency (clients)", "fraction");
                line(o, "occupancy (mean rows / row limit)", x, occ);
                line(o, "decode row share", x, closed.stream().mapToDouble(m -> m.batch().decodeRowShare() == null ? Double.NaN : m.batch().decodeRowShare()).toArray());
                line(o, "prefill row share", x, closed.stream().mapToDouble(m -> m.batch().prefillRowShare() == null ? Double.NaN : m.batch().prefillRowShare()).toArray());
                out.add(save(o, "Batch occupancy vs concurrency", dir, prefix + "occupancy.png"));
            }
        }
        out.add(cdf(run, "TTFT distribution (CDF per level)", "ttft_ms", r -> new double[] {r.ttftMs()}, dir, prefix + "ttft-cdf.png"));
        out.add(cdf(run, "ITL distribution (CDF per level)", "itl_ms", RequestRecord::itlMs, dir, prefix + "itl-cdf.png"));
        return out;
    }

    private static double[] p95(List<LevelMetrics> ls, Function<LevelMetrics, Summary> f) {
        return ls.stream().mapToDouble(m -> f.apply(m) == null ? Double.NaN : f.apply(m).p95()).toArray();
    }

    private static String[] cdf(RunResult run, String title, String xLabel, Function<RequestRecord, double[]> values,
                                Path dir, String file) {
        XYChart c = chart(title, xLabel, "fraction of samples ≤ x");
        int series = 0;
        for (LevelMetrics level : run.levels()) {
            double[] v = run.requests().stream().filter(r -> r.level().equals(level.label()) && !r.probe() && r.ok())
                    .flatMapToDouble(r -> Arrays.stream(values.apply(r))).filter(d -> !Double.isNaN(d)).sorted().toArray();
            if (v.length == 0) continue;
            double[] y = new double[v.length];
            for (int i = 0; i < v.length; i++) y[i] = (i + 1) / (double) v.length;
            XYSeries s = c.addSeries(level.label(), v, y);
            s.setMarker(SeriesMarkers.NONE);
            series++;
        }
        if (series == 0) c.addSeries("no samples", new double[] {0}, new double[] {0});
        return save(c, title, dir, file);
    }

    private static XYChart chart(String title, String x, String y) {
        XYChart c = new XYChartBuilder().width(W).height(H).title(title).xAxisTitle(x).yAxisTitle(y).build();
        c.getStyler().setLegendPosition(org.knowm.xchart.style.Styler.LegendPosition.InsideNW);
        // Without patterns XChart prints every digit of a double (15-digit tick labels).
        c.getStyler().setXAxisDecimalPattern(x.startsWith("concurrency") ? "0" : "#,##0.#");
        c.getStyler().setYAxisDecimalPattern("#,##0.##");
        return c;
    }

    /** The knee and the recommendation as vertical lines, so the reader sees where batching stops paying. */
    private static void mark(XYChart c, RunResult run, double[] x, double top) {
        var rec = run.recommendation();
        if (rec == null || top <= 0) return;
        if (rec.kneeConcurrency() != null) vertical(c, "knee (" + rec.kneeConcurrency() + ")", rec.kneeConcurrency(), top);
        if (rec.kneeConcurrency() == null || rec.recommendedMaxConcurrency() != rec.kneeConcurrency()) {
            vertical(c, "recommended (" + rec.recommendedMaxConcurrency() + ")", rec.recommendedMaxConcurrency(), top);
        }
    }

    private static void vertical(XYChart c, String name, double at, double top) {
        XYSeries s = c.addSeries(name, new double[] {at, at}, new double[] {0, top * 1.05});
        s.setMarker(SeriesMarkers.NONE);
        s.setLineStyle(org.knowm.xchart.style.lines.SeriesLines.DASH_DASH);
    }

    private static void line(XYChart c, String name, double[] x, double[] y) {
        List<Double> xs = new ArrayList<>(), ys = new ArrayList<>();
        for (int i = 0; i < x.length; i++) {
            if (!Double.isNaN(y[i])) {
                xs.add(x[i]);
                ys.add(y[i]);
            }
        }
        if (!xs.isEmpty()) c.addSeries(name, xs, ys);
    }

    private static String[] save(XYChart c, String title, Path dir, String file) {
        try {
            BitmapEncoder.saveBitmap(c, dir.resolve(file).toString(), BitmapEncoder.BitmapFormat.PNG);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write plot " + file, e);
        }
        return new String[] {title, file};
    }
}
