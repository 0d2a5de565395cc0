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

/** The repacked Q6_K layout and its kernels, against the file layout and a float64 reference. */
class Q6SpansTest {
    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;

    static WeightMatrix randomQ6_K(int rows, int cols, long seed) {
        SplittableRandom rnd = new SplittableRandom(seed);
        MemorySegment m = Q4SpansTest.randomBlocks(GgmlType.Q6_K, rows, cols, rnd);
        for (long o = 0; o < m.byteSize(); o += 210) {
            m.set(ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(LE), o + 208, Float.floatToFloat16((float) (0.0001 + 0.001 * rnd.nextDouble())));
        }
        return new WeightMatrix("q6", GgmlType.Q6_K, rows, cols, GgmlType.Q6_K.bytesFor(cols), m);
    }

    @Test
    void repackedRowsHoldTheSameValuesAsTheFile() {
        int cols = 512;
        WeightMatrix w = randomQ6_K(3, cols, 1);
        WeightMatrix p = Q6Spans.repack(w, Arena.ofAuto());
        assertThat(p.layout()).isEqualTo(WeightLayout.Q6_K_SPANS);
        assertThat(p.rowBytes()).isEqualTo(Q6Spans.rowBytes(cols));
        float[] want = new float[cols];
        for (int r = 0; r < w.rows(); r++) {
            RowDecoder.decodeRow(w, r, want, 0);
            long off = p.rowOffset(r);
            for (int c = 0; c < cols; c++) {
                int span = c / 32, k = (c % 32) / 8, j = c % 8;
                int q = p.data().get(ValueLayout.JAVA_BYTE, off + cols / 64 + cols / 16 + 32L * span + 4L * j + k) & 0xFF;
                float s = p.data().get(ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(LE), off + 4L * (c / 256))
                        * p.data().get(ValueLayout.JAVA_BYTE, off + cols / 64 + c / 16);
                assertThat(q).isLessThan(64);
                assertThat(Float.floatToRawIntBits(s * (q - 32))).as("row %d col %d", r, c).isEqualTo(Float.floatToRawIntBits(want[c]));
            }
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3, 4, 5, 8})
    void matchesFloat64ReferenceAndIsBitIdenticalAcrossBatchSizes(int nRows) {
        WeightMatrix w = randomQ6_K(19, 768, 2);
        assertThat(new SimdKernels().prepare(w, Arena.ofAuto()).layout()).isEqualTo(WeightLayout.Q6_K_SPANS);
        Q4SpansTest.checkAgainstReference(w, nRows);
    }
}
