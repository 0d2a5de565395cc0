package dgr.engine.kernel;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;

/** Weights on huge pages: zeroed, usable, aligned, unmapped with their arena, and results unchanged. */
class NativeMemoryTest {
    @Test
    @EnabledOnOs(OS.LINUX)
    void largeWeightsAreZeroedWritableAndOnTwoMiBBoundariesUntilTheArenaCloses() {
        assertThat(NativeMemory.LINUX).as("libc calls on Linux (%s)", NativeMemory.UNAVAILABLE).isNotNull();
        MemorySegment m;
        long bytes = 5 * NativeMemory.HUGE_PAGE + 12345;
        try (Arena arena = Arena.ofConfined()) {
            m = NativeMemory.allocateWeights(bytes, arena);
            assertThat(m.byteSize()).isEqualTo(bytes);
            assertThat(m.address() % NativeMemory.HUGE_PAGE).isZero();
            for (long o = 0; o < bytes; o += 4093) assertThat(m.get(ValueLayout.JAVA_BYTE, o)).isZero();
            m.set(ValueLayout.JAVA_LONG_UNALIGNED, bytes - 8, 0x0123456789abcdefL);
            m.set(ValueLayout.JAVA_BYTE, 0, (byte) 7);
            assertThat(m.get(ValueLayout.JAVA_LONG_UNALIGNED, bytes - 8)).isEqualTo(0x0123456789abcdefL);
            assertThat(m.scope().isAlive()).isTrue();
        }
        assertThat(m.scope().isAlive()).isFalse();
        assertThat(NativeMemory.describeHugePages()).contains("2 MiB pages");
    }

    @Test
    void smallWeightsStayInPlainArenaMemory() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment m = NativeMemory.allocateWeights(64 * 1024, arena);
            assertThat(m.byteSize()).isEqualTo(64 * 1024);
            assertThat(m.address() % 64).isZero();
            assertThat(m.get(ValueLayout.JAVA_INT, 1024)).isZero();
        }
    }

    /** A repacked Q4_0 matrix over 2 MiB (so on the mapped pages) computes what the float64 reference does, alone and batched. */
    @Test
    void aRepackedMatrixOnHugePagesGivesTheSameResults() {
        WeightMatrix w = Q4SpansTest.randomQ4_0(1024, 4096, 11); // 2.25 MiB repacked
        assertThat(Q4Spans.rowBytes(w.type(), w.cols()) * w.rows()).isGreaterThan(NativeMemory.HUGE_PAGE);
        java.util.SplittableRandom rnd = new java.util.SplittableRandom(5);
        Q4SpansTest.checkMatmul(w, 3, i -> rnd.nextGaussian());
    }
}
