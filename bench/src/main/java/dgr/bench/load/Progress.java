package dgr.bench.load;

import java.io.PrintStream;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A per-level progress line on stderr: rewritten in place on a console, printed at each quarter
 * otherwise (so CI logs get four lines per level, not hundreds).
 */
public final class Progress {
    private final PrintStream out;
    private final String label;
    private final int total;
    private final boolean console;
    private final AtomicInteger done = new AtomicInteger();
    private final long start = System.nanoTime();
    private int lastQuarter;

    public Progress(PrintStream out, String label, int total) {
        this.out = out;
        this.label = label;
        this.total = total;
        this.console = System.console() != null && out == System.err;
        if (out != null) print(0);
    }

    public void tick() {
        int d = done.incrementAndGet();
        if (out == null) return;
        synchronized (this) {
            if (console) print(d);
            else if (d * 4 / Math.max(1, total) > lastQuarter) {
                lastQuarter = d * 4 / Math.max(1, total);
                print(d);
            }
        }
    }

    private void print(int d) {
        int width = 24;
        int filled = total == 0 ? width : Math.min(width, d * width / total);
        String bar = "#".repeat(filled) + ".".repeat(width - filled);
        String line = String.format("%-8s [%s] %d/%d requests, %.1f s", label, bar, d, total,
                (System.nanoTime() - start) / 1e9);
        if (console) out.print("\r" + line);
        else out.println(line);
        out.flush();
    }

    public void finish() {
        if (out != null && console) {
            print(done.get());
            out.println();
        }
    }
}
