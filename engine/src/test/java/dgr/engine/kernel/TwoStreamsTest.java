package dgr.engine.kernel;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** The batch-1 row order visits every row of a chunk exactly once, alternating its two halves. */
class TwoStreamsTest {

    @Test
    void everyRowOnceAlternatingHalves() {
        for (int len = 0; len <= 9; len++) {
            int n = len;
            int[] order = IntStream.range(0, n).map(i -> SpanKernels.twoStreams(i, n)).toArray();
            assertThat(order).as("len %d", n).containsExactlyInAnyOrder(IntStream.range(0, n).toArray());
        }
        assertThat(IntStream.range(0, 7).map(i -> SpanKernels.twoStreams(i, 7)).toArray()).containsExactly(0, 3, 1, 4, 2, 5, 6);
    }
}
