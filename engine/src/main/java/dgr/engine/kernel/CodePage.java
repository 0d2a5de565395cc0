package dgr.engine.kernel;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.function.Function;

/**
 * Machine code dgr carries as bytes ({@link Prefetch}'s thirteen, {@link Q8Native}'s and {@link NativeAttention}'s images),
 * placed in pages of their own and called through foreign downcalls: {@code mmap} read-write,
 * copy, then {@code mprotect} read-and-execute, so no page is ever writable and executable at
 * once. The pages stay mapped for the life of the process (one per piece of code). Linux on x86-64
 * only: {@link #unavailable} says why not elsewhere.
 */
final class CodePage {
    private CodePage() {}

    /** Why machine code cannot run here, or null when it can (Linux, x86-64). */
    static String unavailable() {
        String arch = System.getProperty("os.arch", ""), os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        if (!os.contains("linux") || !(arch.equals("amd64") || arch.equals("x86_64"))) {
            return "needs Linux on x86-64, not " + os + " on " + arch;
        }
        return null;
    }

    /** A kernel chosen for this CPU, or null and why not (for the benchmark reports' line). */
    record Choice<K>(K kernel, String why) {}

    /** Loads one variant's image (checking its hash) into a kernel. */
    interface Loader<V, K> {
        K load(V variant) throws Throwable;
    }

    /**
     * The kernel of the first of {@code variants} (best first) whose CPU flags ({@code flags}) this CPU lists
     * and that {@code wanted}, the value of the JVM property {@code property}, allows: {@code "true"} any,
     * {@code "false"} none, else the variant's name, case and underscores aside ({@code avx512vnni} names
     * {@code AVX512_VNNI}). Without one, or where loading it fails, no kernel and the reason.
     */
    static <V extends Enum<V>, K> Choice<K> choose(String property, String wanted, V[] variants, Function<V, List<String>> flags,
                                                   Loader<V, K> loader) {
        if (wanted.equals("false")) return new Choice<>(null, "-D" + property + "=false");
        String why = unavailable();
        if (why != null) return new Choice<>(null, why);
        try {
            Set<String> cpu = cpuFlags();
            for (V v : variants) {
                boolean named = wanted.equals("true") || wanted.equalsIgnoreCase(v.name()) || wanted.equalsIgnoreCase(v.name().replace("_", ""));
                if (named && cpu.containsAll(flags.apply(v))) return new Choice<>(loader.load(v), null);
            }
        } catch (Throwable t) {
            return new Choice<>(null, t.toString());
        }
        return new Choice<>(null, "no image for this CPU" + (wanted.equals("true") ? "" : " as -D" + property + "=" + wanted));
    }

    /** The CPU's flags as {@code /proc/cpuinfo} lists them (only those the OS enables), or none. */
    static Set<String> cpuFlags() throws IOException {
        Path cpuinfo = Path.of("/proc/cpuinfo");
        if (!Files.isReadable(cpuinfo)) return Set.of();
        for (String line : Files.readAllLines(cpuinfo)) {
            if (line.startsWith("flags")) return Set.of(line.substring(line.indexOf(':') + 1).trim().split("\\s+"));
        }
        return Set.of();
    }

    /**
     * The image {@code resource} (beside this class) in a new code page, after checking that its bytes
     * have the SHA-256 {@code sha256}: an image is only ever run as committed.
     */
    static MemorySegment loadImage(String resource, String sha256) throws Throwable {
        byte[] code;
        try (java.io.InputStream s = CodePage.class.getResourceAsStream(resource)) {
            if (s == null) throw new IllegalStateException("resource " + resource + " missing");
            code = s.readAllBytes();
        }
        String sha = java.util.HexFormat.of().formatHex(java.security.MessageDigest.getInstance("SHA-256").digest(code));
        if (!sha.equals(sha256)) throw new IllegalStateException(resource + " has SHA-256 " + sha + ", expected " + sha256);
        return load(code);
    }

    /**
     * {@code code} in a new read-and-execute mapping, its first byte page-aligned; the code's
     * entry is its first byte. Throws when native access is denied or a call fails.
     */
    static MemorySegment load(byte[] code) throws Throwable {
        Linker l = Linker.nativeLinker();
        var libc = l.defaultLookup();
        MethodHandle mmap = l.downcallHandle(libc.find("mmap").orElseThrow(), FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.ADDRESS,
                ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG));
        MethodHandle mprotect = l.downcallHandle(libc.find("mprotect").orElseThrow(), FunctionDescriptor.of(ValueLayout.JAVA_INT,
                ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT));
        int read = 1, write = 2, exec = 4, privateAnonymous = 0x02 | 0x20;
        long size = (code.length + 4095L) / 4096 * 4096;
        MemorySegment page = (MemorySegment) mmap.invokeExact(MemorySegment.NULL, size, read | write, privateAnonymous, -1, 0L);
        if (page.address() == -1L || page.address() == 0L) throw new IllegalStateException("mmap of a code page failed");
        page = page.reinterpret(size);
        MemorySegment.copy(code, 0, page, ValueLayout.JAVA_BYTE, 0, code.length);
        int rc = (int) mprotect.invokeExact(page, size, read | exec);
        if (rc != 0) throw new IllegalStateException("mprotect of a code page failed (" + rc + ")");
        return page;
    }
}
