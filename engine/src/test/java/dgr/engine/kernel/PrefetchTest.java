package dgr.engine.kernel;

import static org.assertj.core.api.Assertions.assertThat;

import dgr.gguf.GgmlType;
import java.lang.foreign.Arena;
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
        if (!Prefetch.ENABLED) return;
        Arena arena = Arena.ofConfined();
        var data = arena.allocate(18L * 8 * 16, 64);
        WeightMatrix w = new WeightMatrix("w", GgmlType.Q4_0, 16, 256, 18L * 8, data);
        Prefetch.rows(w, 0, 16);
        Prefetch.rows(w, 15, 16);
        Prefetch.rows(w, 3, 3); // empty range: no call (the native loop needs at least one line)
        assertThat(Prefetch.start(w, 0, 16)).isEqualTo(Prefetch.rowsAhead(w.rowBytes())).isEqualTo(15); // 144-byte rows
        Prefetch.next(w, 15, 15, 16); // past the walk's end: nothing
        Prefetch.next(w, 0, 15, 16);
        WeightMatrix heap = new WeightMatrix("h", GgmlType.Q4_0, 16, 256, 18L * 8, java.lang.foreign.MemorySegment.ofArray(new byte[18 * 8 * 16]));
        Prefetch.rows(heap, 0, 16); // not native: skipped
        arena.close();
        Prefetch.rows(w, 0, 16); // freed memory: a prefetch never faults
    }
}
