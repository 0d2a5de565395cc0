package dgr.engine.kernel;

import static org.assertj.core.api.Assertions.assertThat;

import dgr.gguf.GgmlType;
import java.lang.foreign.Arena;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class KernelAccountTest {
    @AfterEach
    void stop() {
        KernelAccount.count(false);
    }

    @Test
    void countsEachLayoutsCallsAndMultiplyAddsAndTheRoundingOnlyWhileOn() {
        WeightMatrix q4 = Q8Rows.repack(Q4SpansTest.randomQ4_0(48, 512, 3), Arena.ofShared());
        WeightMatrix q6 = Q8Rows.repack(ByteSpansTest.random(GgmlType.Q6_K, 32, 512, 4), Arena.ofShared());
        float[] x = Q8RowsTest.activations(3, 512, 5), out = new float[3 * 48], counted = new float[3 * 48];
        Scratch s = new Scratch(8, 8);
        Q8Rows.matmul(q4, x, 3, out, 0, 48, s);

        KernelAccount.count(true);
        s.epoch++;
        Q8Rows.matmul(q4, x, 3, counted, 0, 48, s);
        s.epoch++;
        Q8Rows.matmul(q4, x, 3, counted, 16, 48, s);  // a worker's share: rows 16 to 48
        s.epoch++;
        Q8Rows.matmul(q6, x, 2, new float[2 * 32], 0, 32, s);
        var t = KernelAccount.totals();
        assertThat(t.matrices()).extracting(KernelAccount.Matrix::layout).containsExactly(WeightLayout.Q4_0_Q8, WeightLayout.Q6_K_Q8);
        var m4 = t.matrices().get(0);
        assertThat(m4.calls()).isEqualTo(2);
        assertThat(m4.multiplyAdds()).isEqualTo(48L * 512 * 3 + 32L * 512 * 3);
        assertThat(m4.nanos()).isPositive();
        assertThat(m4.gops()).isPositive();
        assertThat(t.matrices().get(1).multiplyAdds()).isEqualTo(32L * 512 * 2);
        assertThat(t.roundingNanos()).as("each call rounded its input (no shared rounding)").isPositive();
        assertThat(t.matrixNanos()).isEqualTo(m4.nanos() + t.matrices().get(1).nanos());
        // counting changes no result
        assertThat(counted).isEqualTo(out);

        KernelAccount.count(false);
        s.epoch++;
        Q8Rows.matmul(q4, x, 3, counted, 0, 48, s);
        assertThat(KernelAccount.totals()).isEqualTo(t);

        KernelAccount.count(true);
        assertThat(KernelAccount.totals().matrices()).isEmpty();
        assertThat(KernelAccount.totals().roundingNanos()).isZero();
        assertThat(KernelAccount.totals().waitingNanos()).isZero();
    }

    @Test
    void countsTheCallersWaitForASlowWorkerOnlyWhileOn() throws Exception {
        try (WorkerPool pool = new WorkerPool(2, "account-test")) {
            WorkerPool.Job slowSecond = (w, n) -> {
                if (w == 1) sleep(30);
            };
            KernelAccount.count(true);
            KernelAccount.count(false);  // counts cleared, then off
            pool.run(slowSecond);
            assertThat(KernelAccount.totals().waitingNanos()).as("not counting").isZero();

            KernelAccount.count(true);
            pool.run(slowSecond);
            // The caller (worker 0) finished at once and waited at least the 30 ms worker 1 slept.
            assertThat(KernelAccount.totals().waitingNanos()).isGreaterThanOrEqualTo(30_000_000L);
            KernelAccount.count(false);
        }
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
