package dgr.engine.kernel;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * Software prefetch of weight rows a little ahead of a batch-1 walk, which Java cannot express:
 * thirteen bytes of x86-64 ({@code prefetcht0} over a range of cache lines) in a page of their own
 * ({@link CodePage}), called through a critical foreign downcall (a few nanoseconds, no
 * thread-state change).
 *
 * <p><b>Why.</b> At batch 1 every weight byte comes from memory once. A demand load that misses
 * to memory stalls the core once it is the oldest instruction, and the hardware prefetcher stops at
 * every 4 KiB boundary and needs a few misses to pick the stream up again. On this session's Intel
 * (Sapphire Rapids-class) VM, llama-1b Q4_0, batch 1, two threads: 14.4–16.4 tok/s without,
 * 19.9–20.8 with the rows 1–2 KiB ahead prefetched (alternating runs); 4 rows ahead was already
 * worse (18.8–19.0), and a plain load of a byte ahead instead of a prefetch made it 25% slower
 * (that load stalls like any other). Prefetch instructions never fault, so a stale or foreign
 * address costs nothing but the call.
 *
 * <p>Only on Linux on x86-64 with native access granted; {@code -Ddgr.prefetch=false} turns it
 * off. Elsewhere, or if any step fails, {@link #ENABLED} is false and walks run without it.
 * Prefetching changes no result: it only moves cache lines earlier.
 */
final class Prefetch {
    /** Prefetch about this many bytes of weights ahead of the row being computed, in whole rows. */
    static final long AHEAD_BYTES = 2048;

    private static final MethodHandle LINES;
    /** Whether {@link #rows} prefetches (else it is never called: walks check this first). */
    static final boolean ENABLED;
    /** One line for benchmark reports. */
    static final String DESCRIPTION;

    static {
        MethodHandle h = null;
        String why;
        String platform = CodePage.unavailable();
        if (!Boolean.parseBoolean(System.getProperty("dgr.prefetch", "true"))) {
            why = "off (-Ddgr.prefetch=false)";
        } else if (platform != null) {
            why = "off (" + platform + ")";
        } else {
            try {
                h = link();
                MemorySegment probe = java.lang.foreign.Arena.ofAuto().allocate(256, 64);
                h.invokeExact(probe.address(), 4L);
                why = "on (prefetcht0, " + AHEAD_BYTES + " bytes of rows ahead at batch 1)";
            } catch (Throwable t) {
                h = null;
                why = "off (" + t + ")";
            }
        }
        LINES = h;
        ENABLED = h != null;
        DESCRIPTION = "software prefetch " + why;
    }

    private Prefetch() {}

    /** The code page and its downcall handle {@code (long address, long lines) -> void}. */
    private static MethodHandle link() throws Throwable {
        // rdi = address, rsi = lines (at least 1):
        // loop: prefetcht0 [rdi] (0F 18 0F); add rdi, 64 (48 83 C7 40); dec rsi (48 FF CE); jnz loop (75 F4); ret (C3)
        byte[] code = {0x0F, 0x18, 0x0F, 0x48, (byte) 0x83, (byte) 0xC7, 0x40, 0x48, (byte) 0xFF, (byte) 0xCE, 0x75, (byte) 0xF4, (byte) 0xC3};
        return Linker.nativeLinker().downcallHandle(CodePage.load(code),
                FunctionDescriptor.ofVoid(ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG), Linker.Option.critical(false));
    }

    /** Rows to prefetch ahead for rows of {@code rowBytes}: {@link #AHEAD_BYTES} rounded up to whole rows. */
    static int rowsAhead(long rowBytes) {
        return (int) Math.max(1, (AHEAD_BYTES + rowBytes - 1) / rowBytes);
    }

    /**
     * Starts a walk over rows {@code [from, to)} of {@code w}: prefetches its first rows and returns
     * how many rows ahead {@link #next} should stay, 0 when prefetch is off.
     */
    static int start(WeightMatrix w, int from, int to) {
        if (!ENABLED) return 0;
        int ahead = rowsAhead(w.rowBytes());
        rows(w, from, Math.min(to, from + ahead));
        return ahead;
    }

    /** Before computing row {@code o} of a walk ending at {@code to}: prefetches row {@code o + ahead}, if the walk has it. */
    static void next(WeightMatrix w, int o, int ahead, int to) {
        if (ahead > 0 && o + ahead < to) rows(w, o + ahead, o + ahead + 1);
    }

    /** Prefetches rows {@code [from, to)} of {@code w} (rows kept whole and in order, {@code rowBytes} apart). Only when {@link #ENABLED}. */
    static void rows(WeightMatrix w, int from, int to) {
        MemorySegment m = w.data();
        if (to <= from || !m.isNative()) return;
        long start = m.address() + w.rowOffset(from), lines = ((to - from) * w.rowBytes() + 63) / 64;
        try {
            LINES.invokeExact(start, lines);
        } catch (Throwable t) {
            throw new IllegalStateException("prefetch call failed", t);
        }
    }
}
