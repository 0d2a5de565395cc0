package dgr.engine.kernel;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/**
 * Where a benchmark's thread time goes in the 8-bit kernels: time and multiply-adds per weight layout
 * in the matrix kernel, and time rounding activations to 8 bits (waits for another worker's rows
 * included). The rest of a pass (attention, norms, the workers' barriers) is what is left of its
 * wall time times its threads. {@code DecodeBench --kernel-account} prints it per prompt length; on
 * a machine lent for minutes it says which matrices a prompt's time goes to, without a profiler.
 *
 * <p>Off unless a benchmark turns it on: then each kernel call reads the clock twice (a few tens of
 * nanoseconds against calls of tens of microseconds and more). Serving never turns it on.
 */
public final class KernelAccount {
    private KernelAccount() {}

    /** Volatile: workers read it per call. */
    private static volatile boolean on;

    private static final Map<WeightLayout, LongAdder[]> MATRIX = new EnumMap<>(WeightLayout.class);
    private static final LongAdder ROUNDING = new LongAdder();

    static {
        for (WeightLayout l : WeightLayout.values()) MATRIX.put(l, new LongAdder[] {new LongAdder(), new LongAdder(), new LongAdder()});
    }

    /** One layout's share: kernel calls, their thread time, and the multiply-adds they did. */
    public record Matrix(WeightLayout layout, long calls, long nanos, long multiplyAdds) {
        /** Integer operations per second, a multiply and an add counted as two (as GOPS figures elsewhere). */
        public double gops() {
            return nanos == 0 ? 0 : 2.0 * multiplyAdds / nanos;
        }
    }

    /** A snapshot: the layouts that ran, in declaration order, and the rounding time. */
    public record Totals(List<Matrix> matrices, long roundingNanos) {
        public long matrixNanos() {
            return matrices.stream().mapToLong(Matrix::nanos).sum();
        }
    }

    /** Clears the counts and starts counting ({@code true}), or stops ({@code false}, counts kept). */
    public static void count(boolean start) {
        if (start) {
            for (LongAdder[] a : MATRIX.values()) for (LongAdder x : a) x.reset();
            ROUNDING.reset();
        }
        on = start;
    }

    /** The counts since {@link #count count(true)}. */
    public static Totals totals() {
        List<Matrix> ms = new ArrayList<>();
        MATRIX.forEach((l, a) -> {
            if (a[0].sum() > 0) ms.add(new Matrix(l, a[0].sum(), a[1].sum(), a[2].sum()));
        });
        return new Totals(List.copyOf(ms), ROUNDING.sum());
    }

    /** {@code System.nanoTime()} while counting, else 0 (the caller passes it back unread). */
    static long start() {
        return on ? System.nanoTime() : 0;
    }

    /** A kernel call on {@code layout} that began at {@code t0} ({@link #start}) did {@code rows × cols × batch} multiply-adds. */
    static void matrix(long t0, WeightLayout layout, long multiplyAdds) {
        if (t0 == 0) return;
        LongAdder[] a = MATRIX.get(layout);
        a[1].add(System.nanoTime() - t0);
        a[0].increment();
        a[2].add(multiplyAdds);
    }

    /** Rounding that began at {@code t0} ({@link #start}) is done. */
    static void rounding(long t0) {
        if (t0 != 0) ROUNDING.add(System.nanoTime() - t0);
    }
}
