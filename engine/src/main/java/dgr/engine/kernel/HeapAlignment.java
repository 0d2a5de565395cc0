package dgr.engine.kernel;

import com.sun.management.HotSpotDiagnosticMXBean;
import java.lang.management.ManagementFactory;

/**
 * Where float-array elements fall against 32-byte boundaries, so the span kernels can read their
 * prepared activations with aligned 256-bit loads.
 *
 * <p>Why it matters: a float array's elements start after its header (16 bytes with the default
 * compressed class pointers), and HotSpot places objects on 8-byte boundaries, so a 32-byte vector
 * load at element {@code 8k} is aligned or straddles two 32-byte halves by chance of allocation,
 * and every other such load then also crosses a 64-byte cache line, costing a second load slot.
 * The batch-1 span kernel issues eight activation loads per 32-byte weight load; with them aligned
 * it ran 11–17% faster (same JVM, alternating; weights in L2) and 7–11% from memory.
 *
 * <p>The JVM can only promise the placement when objects are aligned to 32 bytes
 * ({@code -XX:ObjectAlignmentInBytes=32}, which the {@code dgr} launcher passes): then element
 * {@link #FLOAT_PAD} of every float array sits on a 32-byte boundary for the array's whole life
 * (the garbage collector keeps object alignment when it moves arrays). Without the flag nothing is
 * promised and the pad merely costs a few floats per buffer.
 */
public final class HeapAlignment {
    /** Floats to skip at the start of a float array so that the next one is 32-byte aligned. */
    public static final int FLOAT_PAD;
    /** Whether the running JVM aligns objects to 32 bytes or more, so {@link #FLOAT_PAD} holds. */
    public static final boolean GUARANTEED;

    static {
        int objectAlignment = 8, base = 16;
        try {
            HotSpotDiagnosticMXBean vm = ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
            objectAlignment = Integer.parseInt(vm.getVMOption("ObjectAlignmentInBytes").getValue());
            // Array header: mark word, class word, length. Compact headers fold the class into the
            // mark word; without compressed class pointers the class word takes 8 bytes.
            if (flag(vm, "UseCompactObjectHeaders")) base = 12;
            else if (!flag(vm, "UseCompressedClassPointers")) base = 20;
        } catch (RuntimeException | LinkageError notHotSpot) {
            // Another VM: keep the common layout; GUARANTEED stays false.
        }
        FLOAT_PAD = ((32 - base % 32) % 32) / 4;
        GUARANTEED = objectAlignment >= 32;
    }

    private HeapAlignment() {}

    private static boolean flag(HotSpotDiagnosticMXBean vm, String name) {
        try {
            return Boolean.parseBoolean(vm.getVMOption(name).getValue());
        } catch (IllegalArgumentException absent) {
            return false;
        }
    }

    /** One line for benchmark reports: whether activation loads are aligned. */
    public static String describe() {
        return GUARANTEED ? "activations 32-byte aligned (ObjectAlignmentInBytes >= 32)"
                : "activation alignment left to chance (run with -XX:ObjectAlignmentInBytes=32, as ./dgr does)";
    }
}
