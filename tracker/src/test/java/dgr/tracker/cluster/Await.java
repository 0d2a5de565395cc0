package dgr.tracker.cluster;

import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/** Waits for a condition by polling it (never a fixed sleep), failing with a message after a deadline. */
public final class Await {
    private Await() {}

    public static void until(String what, Duration limit, BooleanSupplier condition) {
        long deadline = System.nanoTime() + limit.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) throw new AssertionError("timed out after " + limit + " waiting for " + what);
            LockSupport.parkNanos(5_000_000);
        }
    }
}
