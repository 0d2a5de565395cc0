package dgr.engine.kernel;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicIntegerArray;
import org.junit.jupiter.api.Test;

/** A pool told to rest parks its idle workers, and every later job still runs on every worker. */
class WorkerPoolTest {
    @Test
    void aRestingPoolWakesForTheNextJobAndRunsItOnEveryWorker() throws Exception {
        try (WorkerPool pool = new WorkerPool(3, "rest-test")) {
            AtomicIntegerArray runs = new AtomicIntegerArray(3);
            for (int round = 1; round <= 200; round++) {
                pool.run((w, n) -> runs.incrementAndGet(w));
                // Rest after some jobs and not others; now and then long enough for the workers to park.
                if (round % 2 == 0) pool.rest();
                if (round % 50 == 0) awaitParked(pool, "rest-test");
                for (int w = 0; w < 3; w++) assertThat(runs.get(w)).as("worker %d after round %d", w, round).isEqualTo(round);
            }
        }
    }

    @Test
    void restingBeforeAJobThatThrowsStillReportsTheFailure() {
        try (WorkerPool pool = new WorkerPool(2, "rest-fail")) {
            pool.rest();
            RuntimeException thrown = null;
            try {
                pool.run((w, n) -> { if (w == 1) throw new IllegalStateException("worker 1 failed"); });
            } catch (RuntimeException e) {
                thrown = e;
            }
            assertThat(thrown).hasMessage("worker 1 failed");
            pool.rest();
            int[] seen = new int[2];
            pool.run((w, n) -> seen[w] = n);
            assertThat(seen).containsExactly(2, 2);
        }
    }

    /** Waits until every worker thread of the pool is parked (a rested pool gets there without spinning). */
    private static void awaitParked(WorkerPool pool, String name) throws InterruptedException {
        long until = System.nanoTime() + 10_000_000_000L;
        while (System.nanoTime() < until) {
            boolean all = Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().startsWith(name + "-"))
                    .allMatch(t -> t.getState() == Thread.State.WAITING);
            if (all) return;
            Thread.sleep(1);
        }
        throw new AssertionError("the workers of " + name + " did not park within 10 s");
    }
}
