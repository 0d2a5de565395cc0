package dgr.engine.kernel;

import static org.assertj.core.api.Assertions.assertThat;

import dgr.gguf.GgmlType;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** {@link SimdF32#decodeHalf} against {@link RowDecoder}, bit for bit, over every kind of F16 and BF16 value. */
class HalfRowsTest {
    @ParameterizedTest
    @EnumSource(value = GgmlType.class, names = {"F16", "BF16"})
    void vectorDecodeEqualsTheScalarOneForEveryBitPattern(GgmlType type) {
        int rows = 2, cols = 65536 / 2; // 65536 patterns over two rows: every 16-bit value once
        MemorySegment m = Arena.ofAuto().allocate(2L * rows * cols, 64);
        ValueLayout.OfShort le = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
        // Shuffled, so infinities and NaNs sit beside ordinary values within one 8-value step.
        int[] perm = new int[65536];
        for (int i = 0; i < perm.length; i++) perm[i] = i;
        SplittableRandom rnd = new SplittableRandom(9);
        for (int i = perm.length - 1; i > 0; i--) {
            int j = rnd.nextInt(i + 1), t = perm[i];
            perm[i] = perm[j];
            perm[j] = t;
        }
        for (int i = 0; i < perm.length; i++) m.set(le, 2L * i, (short) perm[i]);
        WeightMatrix w = new WeightMatrix("half", type, rows, cols, 2L * cols, m);
        float[] want = new float[cols], got = new float[cols];
        for (int r = 0; r < rows; r++) {
            RowDecoder.decodeRow(w, r, want, 0);
            SimdF32.decodeHalf(w, r, got);
            for (int c = 0; c < cols; c++) {
                assertThat(Float.floatToRawIntBits(got[c])).as("row %d col %d bits %04x", r, c, perm[r * cols + c])
                        .isEqualTo(Float.floatToRawIntBits(want[c]));
            }
        }
    }
}
