package dgr.engine.kernel;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dgr.gguf.GgmlType;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Locale;
import org.junit.jupiter.api.Test;

/** The native prefetch is on exactly where it can be, and calling it over any rows is harmless. */
class PrefetchTest {

    @Test
    void enabledOnLinuxX86_64Only() {
        String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT), arch = System.getProperty("os.arch", "");
        boolean possible = os.contains("linux") && (arch.equals("amd64") || arch.equals("x86_64"))
                && Boolean.parseBoolean(System.getProperty("dgr.prefetch", "true"));
        assertThat(Prefetch.ENABLED).as(Prefetch.DESCRIPTION).isEqualTo(possible);
        assertThat(Prefetch.DESCRIPTION).startsWith("software prefetch " + (possible ? "on" : "off"));
    }

    @Test
    void rowsAheadCoverAboutTwoKibInWholeRows() {
        assertThat(Prefetch.rowsAhead(1152)).isEqualTo(2); // llama-1b Q4_0, 2048 columns
        assertThat(Prefetch.rowsAhead(4608)).isEqualTo(1); // 8192 columns
        assertThat(Prefetch.rowsAhead(2048)).isEqualTo(1);
        assertThat(Prefetch.rowsAhead(64)).isEqualTo(32);
    }

    @Test
    void prefetchingRowsOfNativeAndHeapMatricesChangesNothing() {
        assumeTrue(Prefetch.ENABLED, "software prefetch is off here: " + Prefetch.DESCRIPTION);
        byte[] pattern = new byte[18 * 8 * 16];
        for (int i = 0; i < pattern.length; i++) pattern[i] = (byte) (i * 31 + 7);
        Arena arena = Arena.ofConfined();
        var data = arena.allocate(pattern.length, 64);
        MemorySegment.copy(MemorySegment.ofArray(pattern), 0, data, 0, pattern.length);
        WeightMatrix w = new WeightMatrix("w", GgmlType.Q4_0, 16, 256, 18L * 8, data);
        Prefetch.rows(w, 0, 16);
        Prefetch.rows(w, 15, 16);
        Prefetch.rows(w, 3, 3); // empty range: no call (the native loop needs at least one line)
        assertThat(Prefetch.start(w, 0, 16)).isEqualTo(Prefetch.rowsAhead(w.rowBytes())).isEqualTo(15); // 144-byte rows
        Prefetch.next(w, 15, 15, 16); // past the walk's end: nothing
        Prefetch.next(w, 0, 15, 16);
        assertThat(data.toArray(ValueLayout.JAVA_BYTE)).as("the prefetched rows' bytes").isEqualTo(pattern);
        byte[] heapBytes = pattern.clone();
        WeightMatrix heap = new WeightMatrix("h", GgmlType.Q4_0, 16, 256, 18L * 8, MemorySegment.ofArray(heapBytes));
        Prefetch.rows(heap, 0, 16); // not native: skipped
        assertThat(heapBytes).isEqualTo(pattern);
        arena.close();
        Prefetch.rows(w, 0, 16); // freed memory: a prefetch never faults
    }
}
