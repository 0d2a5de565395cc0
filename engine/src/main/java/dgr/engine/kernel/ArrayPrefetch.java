package dgr.engine.kernel;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * Software prefetch of strided runs of a heap array (a K/V cache page of {@code short}s) a stretch
 * ahead of a decode step's attention, which Java cannot express: a few dozen bytes of x86-64
 * ({@code prefetcht0} over each run's cache lines, run after run) in a page of their own
 * ({@link CodePage}), called through a critical foreign downcall that takes the array in place
 * ({@code Linker.Option.critical(true)}: no copy, no thread-state change).
 *
 * <p><b>Why.</b> A decode claim reads half the K/V heads of each page: 4 KiB of every 8 KiB K
 * block and 512 bytes of every 1 KiB V row (llama-1b), so the hardware prefetchers start again at
 * every block and stretch. On the AMD EPYC (Zen 3) VM at depth 4096 the f16 cache was read at
 * 2.2 GB/s on one thread, where the weights stream at 9.5, and a read-ahead with plain loads only
 * moved the wait onto those loads (docs/engine.md, "Decode at depth 4096"). A prefetch never stalls
 * retirement and never faults, so a stale address costs nothing but the call.
 *
 * <p>On Linux on x86-64 with native access granted, 256-bit and 512-bit machines alike (on the
 * Intel AVX-512 VM a claim's half of the heads widened from memory at about 3.7 GB/s on one thread
 * against 5.5 for all heads in address order: docs/engine.md, "Decode at depth 4096 on the Intel
 * AVX-512 VM"); {@code -Ddgr.prefetch=false} or {@code -Ddgr.prefetch.kv=false} turns it off.
 * Prefetching changes no result: it only moves cache lines earlier.
 */
public final class ArrayPrefetch {
    private static final MethodHandle RUNS;
    /** Whether {@link #shorts} prefetches (callers check this first and skip the call otherwise). */
    public static final boolean ENABLED;
    /** One line for benchmark reports. */
    static final String DESCRIPTION;

    static {
        MethodHandle h = null;
        String why;
        String platform = CodePage.unavailable();
        if (!Boolean.parseBoolean(System.getProperty("dgr.prefetch", "true"))
                || !Boolean.parseBoolean(System.getProperty("dgr.prefetch.kv", "true"))) {
            why = "off (-Ddgr.prefetch=false or -Ddgr.prefetch.kv=false)";
        } else if (platform != null) {
            why = "off (" + platform + ")";
        } else {
            try {
                h = link();
                h.invokeExact(MemorySegment.ofArray(new short[1024]), 3L, 512L, 130L, 6L);
                why = "on (prefetcht0 of a decode step's next K/V stretch)";
            } catch (Throwable t) {
                h = null;
                why = "off (" + t + ")";
            }
        }
        RUNS = h;
        ENABLED = h != null;
        DESCRIPTION = "K/V cache prefetch " + why;
    }

    private ArrayPrefetch() {}

    /**
     * The code page and its downcall handle {@code (segment, runs, strideBytes, runBytes, offsetBytes) -> void}:
     * from the segment's address plus {@code offsetBytes}, {@code runs} runs of {@code runBytes}
     * bytes, {@code strideBytes} apart, each run's lines from the one holding its first byte to the
     * one holding its last (runs and runBytes at least 1).
     */
    private static MethodHandle link() throws Throwable {
        // rdi = address, rsi = runs, rdx = stride, rcx = run bytes, r8 = offset.
        //        add rdi, r8                 4C 01 C7
        // outer: mov rax, rdi                48 89 F8
        //        and rax, -64                48 83 E0 C0
        //        lea r8, [rdi + rcx + 63]    4C 8D 44 0F 3F
        //        sub r8, rax                 49 29 C0
        //        shr r8, 6                   49 C1 E8 06      (lines of this run)
        // inner: prefetcht0 [rax]            0F 18 08
        //        add rax, 64                 48 83 C0 40
        //        dec r8                      49 FF C8
        //        jnz inner                   75 F4
        //        add rdi, rdx                48 01 D7
        //        dec rsi                     48 FF CE
        //        jnz outer                   75 D9
        //        ret                         C3
        byte[] code = {
            0x4C, 0x01, (byte) 0xC7,
            0x48, (byte) 0x89, (byte) 0xF8,
            0x48, (byte) 0x83, (byte) 0xE0, (byte) 0xC0,
            0x4C, (byte) 0x8D, 0x44, 0x0F, 0x3F,
            0x49, 0x29, (byte) 0xC0,
            0x49, (byte) 0xC1, (byte) 0xE8, 0x06,
            0x0F, 0x18, 0x08,
            0x48, (byte) 0x83, (byte) 0xC0, 0x40,
            0x49, (byte) 0xFF, (byte) 0xC8,
            0x75, (byte) 0xF4,
            0x48, 0x01, (byte) 0xD7,
            0x48, (byte) 0xFF, (byte) 0xCE,
            0x75, (byte) 0xD9,
            (byte) 0xC3};
        return Linker.nativeLinker().downcallHandle(CodePage.load(code),
                FunctionDescriptor.ofVoid(ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG,
                        ValueLayout.JAVA_LONG),
                Linker.Option.critical(true));
    }

    /**
     * Prefetches {@code runs} runs of {@code length} elements of {@code a}, the first at
     * {@code a[from]}, each {@code stride} elements after the one before. Only when {@link #ENABLED};
     * nothing when {@code runs} or {@code length} is not positive.
     */
    public static void shorts(short[] a, int from, int runs, int stride, int length) {
        if (runs <= 0 || length <= 0) return;
        try {
            RUNS.invokeExact(MemorySegment.ofArray(a), (long) runs, 2L * stride, 2L * length, 2L * from);
        } catch (Throwable t) {
            throw new IllegalStateException("prefetch call failed", t);
        }
    }
}
