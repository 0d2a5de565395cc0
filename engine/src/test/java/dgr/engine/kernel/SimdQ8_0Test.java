package dgr.engine.kernel;

import static org.assertj.core.api.Assertions.assertThat;

import dgr.gguf.GgmlType;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Q8_0 kernels, which read an aligned copy of their input ({@link SpanInput#copy}). */
class SimdQ8_0Test {
    /** A random Q8_0 matrix in ggml layout with realistic f16 scales. */
    static WeightMatrix randomQ8_0(int rows, int cols, long seed) {
        SplittableRandom rnd = new SplittableRandom(seed);
        MemorySegment m = Q4SpansTest.randomBlocks(GgmlType.Q8_0, rows, cols, rnd);
        ValueLayout.OfShort f16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
        for (long o = 0; o < m.byteSize(); o += 34) {
            m.set(f16, o, Float.floatToFloat16((float) (0.001 + 0.02 * rnd.nextDouble()) * (rnd.nextBoolean() ? 1 : -1)));
        }
        return new WeightMatrix("w", GgmlType.Q8_0, rows, cols, GgmlType.Q8_0.bytesFor(cols), m);
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3, 4, 7})
    void matchesFloat64ReferenceAndIsBitIdenticalAcrossBatchSizes(int nRows) {
        SplittableRandom rnd = new SplittableRandom(5);
        Q4SpansTest.checkMatmul(randomQ8_0(13, 320, 8), nRows, i -> rnd.nextGaussian());
    }

    @Test
    void theCopiedInputIsRenewedWhenTheEpochMoves() {
        int rows = 6, cols = 256;
        WeightMatrix w = randomQ8_0(rows, cols, 2);
        float[] x = new float[2 * cols];
        java.util.Arrays.fill(x, 1f);
        float[] a = new float[2 * rows], b = new float[2 * rows], c = new float[2 * rows];
        Scratch s = new Scratch(cols, 16);
        Kernels k = new SimdKernels();
        k.matmul(w, x, 2, a, 0, rows, s);
        java.util.Arrays.fill(x, 2f);
        k.matmul(w, x, 2, b, 0, rows, s); // same array, same epoch: the held copy is used
        s.epoch++;
        k.matmul(w, x, 2, c, 0, rows, s);
        for (int o = 0; o < 2 * rows; o++) {
            assertThat(b[o]).isEqualTo(a[o]);
            assertThat(c[o]).isEqualTo(2 * a[o]); // doubling every input doubles each product exactly
        }
    }
}
