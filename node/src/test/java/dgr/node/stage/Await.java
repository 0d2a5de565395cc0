package dgr.node.stage;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/** Polls a condition until it holds or the time is up (then fails naming what was awaited). */
final class Await {
    private Await() {}

    static void until(Duration timeout, String what, BooleanSupplier condition) {
        long end = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - end > 0) throw new AssertionError("not within " + timeout + ": " + what);
            Thread.onSpinWait();
            java.util.concurrent.locks.LockSupport.parkNanos(5_000_000);
        }
    }
}
