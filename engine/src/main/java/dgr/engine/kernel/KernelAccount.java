package dgr.engine.kernel;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/**
 * Where a benchmark's thread time goes in the 8-bit kernels: time and multiply-adds per weight layout
 * in the matrix kernel, and time rounding activations to 8 bits (waits for another worker's rows
 * included); and time the workers wait on one another ({@link WorkerPool}: the caller for the others at
 * a job's end, a worker for the next job while the caller works alone). The rest of a pass (attention,
 * norms, RoPE, the calls around the kernels) is what is left of its wall time times its threads.
 * {@code DecodeBench --kernel-account} prints it per prompt length; on a machine lent for minutes it
 * says which matrices a prompt's time goes to, without a profiler.
 *
 * <p>Off unless a benchmark turns it on: then each kernel call reads the clock twice (a few tens of
 * nanoseconds against calls of tens of microseconds and more). Serving never turns it on.
 */
public final class KernelAccount {
    private KernelAccount() {}

    /** Volatile: workers read it per call. */
    private static volatile boolean on;

    /** One layout's counters, added to by every worker. */
    private record Counters(LongAdder calls, LongAdder nanos, LongAdder multiplyAdds) {
        Counters() {
            this(new LongAdder(), new LongAdder(), new LongAdder());
        }

        void reset() {
            calls.reset();
            nanos.reset();
            multiplyAdds.reset();
        }
    }

    private static final Map<WeightLayout, Counters> MATRIX = new EnumMap<>(WeightLayout.class);
    private static final LongAdder ROUNDING = new LongAdder(), WAITING = new LongAdder();

    static {
        for (WeightLayout l : WeightLayout.values()) MATRIX.put(l, new Counters());
    }

    /** One layout's share: kernel calls, their thread time, and the multiply-adds they did. */
    public record Matrix(WeightLayout layout, long calls, long nanos, long multiplyAdds) {
        /** Integer operations per second, a multiply and an add counted as two (as GOPS figures elsewhere). */
        public double gops() {
            return nanos == 0 ? 0 : 2.0 * multiplyAdds / nanos;
        }
    }

    /** A snapshot: the layouts that ran, in declaration order, the rounding time and the workers' waits. */
    public record Totals(List<Matrix> matrices, long roundingNanos, long waitingNanos) {
        public long matrixNanos() {
            return matrices.stream().mapToLong(Matrix::nanos).sum();
        }
    }

    /** Clears the counts and starts counting ({@code true}), or stops ({@code false}, counts kept). */
    public static void count(boolean start) {
        if (start) {
            MATRIX.values().forEach(Counters::reset);
            ROUNDING.reset();
            WAITING.reset();
        }
        on = start;
    }

    /** The counts since {@link #count count(true)}. */
    public static Totals totals() {
        List<Matrix> ms = new ArrayList<>();
        MATRIX.forEach((l, k) -> {
            if (k.calls().sum() > 0) ms.add(new Matrix(l, k.calls().sum(), k.nanos().sum(), k.multiplyAdds().sum()));
        });
        return new Totals(List.copyOf(ms), ROUNDING.sum(), WAITING.sum());
    }

    /** {@code System.nanoTime()} while counting, else 0 (the caller passes it back unread). */
    static long start() {
        return on ? System.nanoTime() : 0;
    }

    /** A kernel call on {@code layout} that began at {@code t0} ({@link #start}) did {@code rows × cols × batch} multiply-adds. */
    static void matrix(long t0, WeightLayout layout, long multiplyAdds) {
        if (t0 == 0) return;
        Counters k = MATRIX.get(layout);
        k.nanos().add(System.nanoTime() - t0);
        k.calls().increment();
        k.multiplyAdds().add(multiplyAdds);
    }

    /** Rounding that began at {@code t0} ({@link #start}) is done. */
    static void rounding(long t0) {
        if (t0 != 0) ROUNDING.add(System.nanoTime() - t0);
    }

    /** A wait for another worker (or for the next job) that began at {@code t0} ({@link #start}) is over. */
    static void waiting(long t0) {
        if (t0 != 0) WAITING.add(System.nanoTime() - t0);
    }
}
