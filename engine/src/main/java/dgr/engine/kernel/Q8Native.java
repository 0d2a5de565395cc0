package dgr.engine.kernel;

import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;

/**
 * {@link Q4Q8}'s kernel as x86-64 machine code using AVX-512 VNNI ({@code vpdpbusd}: 64 unsigned ×
 * signed byte products summed into 16 ints per instruction), which the Vector API cannot express:
 * Java has no 8-bit dot product. The bytes ({@code q4q8-avx512vnni.bin}, under 3 KiB, SHA-256
 * checked) are built from dgr's own C source by {@code tools/native-kernels/build.sh} into one
 * flat image with no relocations and no library calls; they run from a {@link CodePage} through
 * a critical downcall that reads the activations and writes the outputs in the Java heap directly.
 *
 * <p><b>Why.</b> {@code java-simd/1} keeps activations in f32, and on a Sapphire Rapids-class VM
 * its float kernels are bound by two FMA/convert ports: llama-1b Q4_0 at batch 1, two threads,
 * 20.6 tok/s against llama.cpp's 35 with its int8 kernels. With this kernel dgr decodes it at
 * 37–40 tok/s (160 at batch 8, where llama.cpp gives 46). One call covers a worker's whole share
 * of a matrix (batch rows in groups of eight, four, two and one; weights prefetched
 * {@link #AHEAD_BYTES} ahead into L2 with {@code prefetcht2}, which measured 39 against 33 tok/s
 * for {@code prefetcht0}; 4096 bytes against 2048: 39 against 37), so the call costs nothing
 * measurable.
 *
 * <p>Used only when the CPU and OS have AVX-512 F/BW/VL/DQ, VNNI, F16C and FMA ({@code /proc/cpuinfo}
 * flags, which the kernel lists only when it saves the vector state), on Linux on x86-64 with
 * native access, and {@code -Ddgr.native=false} is not given. Everywhere else {@link Q4Q8#javaRows}
 * gives the same bits, slowly.
 */
final class Q8Native {
    static final String RESOURCE = "q4q8-avx512vnni.bin";
    static final String SHA256 = "b6efa9a4c0e365fb425b20614244e2926bba30d42aee5b31a46e46a8f4e17292";
    private static final List<String> FLAGS = List.of("avx512f", "avx512bw", "avx512vl", "avx512dq", "avx512_vnni", "f16c", "fma");

    /** Bytes of weights prefetched ahead of the block being read, in the first batch group. */
    static final long AHEAD_BYTES = Long.getLong("dgr.q8.ahead", 4096);

    private static final MethodHandle KERNEL;
    /** Whether {@link #rows} can run. */
    static final boolean AVAILABLE;
    /** One line for benchmark reports. */
    static final String DESCRIPTION;

    static {
        MethodHandle h = null;
        String why;
        try {
            why = unavailable();
            if (why == null) {
                h = link();
                why = "native Q4_0 × 8-bit kernel on (AVX-512 VNNI, prefetcht2 " + AHEAD_BYTES + " bytes ahead)";
            }
        } catch (Throwable t) {
            h = null;
            why = t.toString();
        }
        KERNEL = h;
        AVAILABLE = h != null;
        DESCRIPTION = AVAILABLE ? why : "native Q4_0 × 8-bit kernel off (" + why + "; Java kernel, same results)";
    }

    private Q8Native() {}

    /** Why the native kernel cannot be used here, or null. */
    private static String unavailable() throws IOException {
        if (!Boolean.parseBoolean(System.getProperty("dgr.native", "true"))) return "-Ddgr.native=false";
        String platform = CodePage.unavailable();
        if (platform != null) return platform;
        Path cpuinfo = Path.of("/proc/cpuinfo");
        if (!Files.isReadable(cpuinfo)) return "no /proc/cpuinfo";
        Set<String> flags = Set.of();
        for (String line : Files.readAllLines(cpuinfo)) {
            if (line.startsWith("flags")) {
                flags = Set.of(line.substring(line.indexOf(':') + 1).trim().split("\\s+"));
                break;
            }
        }
        for (String f : FLAGS) {
            if (!flags.contains(f)) return "CPU lacks " + f;
        }
        return null;
    }

    private static MethodHandle link() throws Throwable {
        byte[] code;
        try (InputStream s = Q8Native.class.getResourceAsStream(RESOURCE)) {
            if (s == null) throw new IllegalStateException("resource " + RESOURCE + " missing");
            code = s.readAllBytes();
        }
        String sha = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(code));
        if (!sha.equals(SHA256)) throw new IllegalStateException(RESOURCE + " has SHA-256 " + sha + ", expected " + SHA256);
        ValueLayout.OfLong j = ValueLayout.JAVA_LONG;
        ValueLayout a = ValueLayout.ADDRESS;
        // q4q8(w, rowBytes, o0, o1, nb, aq, aoff, ad, nBatch, out, outStride, ahead)
        return Linker.nativeLinker().downcallHandle(CodePage.load(code),
                FunctionDescriptor.ofVoid(j, j, j, j, j, a, a, a, j, a, j, j), Linker.Option.critical(true));
    }

    /** {@link Q4Q8#javaRows}'s results for weight rows {@code [oStart, oEnd)}, natively; {@code w} must be off-heap. */
    static void rows(WeightMatrix w, Q8Input in, int nRows, float[] out, int oStart, int oEnd, Scratch s) {
        if (oEnd <= oStart) return;
        if (s.outSegmentOf != out) {
            s.outSegmentOf = out;
            s.outSegment = MemorySegment.ofArray(out);
        }
        long ahead = Prefetch.ENABLED ? AHEAD_BYTES : 0;
        try {
            KERNEL.invokeExact(w.data().address(), w.rowBytes(), (long) oStart, (long) oEnd, (long) (w.cols() / 32),
                    in.qSeg, in.offSeg, in.dSeg, (long) nRows, s.outSegment, (long) w.rows(), ahead);
        } catch (Throwable t) {
            throw new IllegalStateException("native Q4_0 × 8-bit kernel call failed", t);
        }
    }
}
