package dgr.engine.kernel;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.List;

/**
 * {@link Q8Rows}'s kernel as x86-64 machine code: 8-bit dot products (AVX-512 VNNI's
 * {@code vpdpbusd}, 64 unsigned × signed byte products into 16 ints per instruction; AVX2's
 * {@code vpmaddubsw}/{@code vpmaddwd}), which the Vector API cannot express: Java has no 8-bit dot
 * product. The images ({@code q8-avx512vnni.bin}, {@code q8-avx2.bin}, SHA-256
 * checked) are built from dgr's own C source by {@code tools/native-kernels/build.sh}, one flat
 * image each with no relocations and no calls; they run from a {@link CodePage} through a critical
 * downcall that reads the activations and writes the outputs in the Java heap directly.
 *
 * <p><b>Why.</b> {@code java-simd/1} keeps activations in f32, and on a Sapphire Rapids-class VM
 * its float kernels are bound by two FMA/convert ports: llama-1b Q4_0 at batch 1, two threads,
 * 20.6 tok/s against llama.cpp's 35 with its int8 kernels. With the VNNI kernel dgr decodes it at
 * 37–40 tok/s (160 at batch 8, where llama.cpp gives 46). One call covers a worker's whole share
 * of a matrix (16-row weight groups outer, batch rows inner in groups of eight, four, two and one, or, in the AVX2
 * image from four rows on (three, but Q8_0), tiles of four, two, one batch rows over weights unpacked once into L1; weights prefetched
 * {@link #AHEAD_BYTES} ahead into L2 with {@code prefetcht2}, which measured 39 against 33 tok/s
 * for {@code prefetcht0}; 4096 bytes against 2048: 39 against 37; the tiles one chunk of blocks ahead, at least, spread
 * over the chunk's work), so the call costs nothing measurable.
 *
 * <p>The AVX-512 image needs AVX-512 F/BW/VL/DQ and VNNI, the AVX2 one AVX2, FMA, F16C, BMI1/2,
 * LZCNT and MOVBE (x86-64-v3), both as {@code /proc/cpuinfo} lists them (only when the OS saves the
 * vector state), Linux on x86-64 and native access. {@code -Ddgr.native=avx2} picks the AVX2 image,
 * {@code -Ddgr.native=false} none; where none runs, {@link Q8Rows#javaRows} gives the same bits, slowly.
 *
 * <p><b>AMX for prompt chunks.</b> Where the CPU has AMX ({@code amx_tile}, {@code amx_int8}) and
 * Linux grants the process its tile state ({@code arch_prctl(ARCH_REQ_XCOMP_PERM)}, asked once at
 * load), the AVX-512 image takes the batch rows in multiples of 16 through one tile multiply per
 * 32-value block ({@code tdpbssd}/{@code tdpbsud}: the block's exact integer sums for 16 batch rows
 * and 16 weight rows), each weight block unpacked once per call for all of them, for every type but
 * Q2_K and Q3_K (Q6_K: a super-block's sums at once, its scales in the weights, over activations rounded per 256 values); the integers
 * are the ones {@code vpdpbusd} forms and the float steps after them are the same, so the bits are too ({@code Q8RowsTest} runs batches past 16). About 1.7 times
 * the VNNI kernel's rate at 64 rows (docs/engine.md, "Prompt chunks on AMX").
 * {@code -Ddgr.amx=false} keeps it off.
 */
final class Q8Native {
    /** The two images, best first, with the CPU flags each needs. */
    enum Variant {
        AVX512_VNNI("q8-avx512vnni.bin", "b603c64608e5544ce5a90dab18923031804f08867a96cd3cf19a5ca1cdaa7552",
                List.of("avx512f", "avx512bw", "avx512vl", "avx512dq", "avx512_vnni", "avx2", "fma", "f16c", "bmi1", "bmi2", "abm", "movbe")),
        AVX2("q8-avx2.bin", "e7a7b70d67ab2a59feaf3b42a3e91624be30062dfa6ae3d006b4180a20101779",
                List.of("avx2", "fma", "f16c", "bmi1", "bmi2", "abm", "movbe"));

        final String resource, sha256;
        final List<String> flags;

        Variant(String resource, String sha256, List<String> flags) {
            this.resource = resource;
            this.sha256 = sha256;
            this.flags = flags;
        }
    }

    /** Bytes of weights prefetched ahead of the block being read, in the first batch group. */
    static final long AHEAD_BYTES = Long.getLong("dgr.q8.ahead", 4096);

    /** The kernel in use, or null (then {@link Q8Rows#javaRows}). */
    static final Q8Native KERNEL;
    /** Whether the kernel may take 16 batch rows at a time through AMX tiles. */
    static final boolean AMX;
    /**
     * The layouts whose matrices take the VNNI path where AMX would, set by an A/B benchmark in one
     * JVM ({@link Q8Kernels#amxForBenchmark}); the bits are the same either way. Empty in serving.
     * Volatile: the workers read it per call.
     */
    static volatile java.util.Set<WeightLayout> amxHeldOff = java.util.Set.of();
    /** One line for benchmark reports. */
    static final String DESCRIPTION;

    static {
        var chosen = CodePage.choose("dgr.native", System.getProperty("dgr.native", "true"), Variant.values(), v -> v.flags, Q8Native::load);
        Q8Native k = chosen.kernel();
        String why = chosen.why();
        KERNEL = k;
        String amxWhy = k == null || k.variant != Variant.AVX512_VNNI ? "no AVX-512 image" : amxUnavailable();
        AMX = amxWhy == null;
        DESCRIPTION = k != null
                ? "native 8-bit kernel " + k.variant.name().toLowerCase(java.util.Locale.ROOT) + " (prefetcht2 " + AHEAD_BYTES + " bytes ahead; AMX "
                        + (AMX ? "for 16 rows at a time" : "off: " + amxWhy) + ")"
                : "native 8-bit kernel off (" + why + "; Java kernel, same results)";
    }

    final Variant variant;
    /** The entry point twice: for products (weights by address) and for rounding (type 512: a heap float array first). */
    private final MethodHandle handle, roundHandle;

    private Q8Native(Variant variant, MethodHandle handle, MethodHandle roundHandle) {
        this.variant = variant;
        this.handle = handle;
        this.roundHandle = roundHandle;
    }

    /**
     * Null where AMX may run: the CPU lists {@code amx_tile} and {@code amx_int8}, and Linux grants
     * this process the tile state ({@code arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA)}
     * through libc's {@code syscall}); else why not.
     */
    static String amxUnavailable() {
        if (!Boolean.parseBoolean(System.getProperty("dgr.amx", "true"))) return "-Ddgr.amx=false";
        try {
            if (!CodePage.cpuFlags().containsAll(List.of("amx_tile", "amx_int8"))) return "the CPU has no AMX int8";
            Linker linker = Linker.nativeLinker();
            MemorySegment syscall = linker.defaultLookup().find("syscall").orElse(null);
            if (syscall == null) return "no libc syscall";
            MethodHandle h = linker.downcallHandle(syscall, FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG,
                    ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG), Linker.Option.firstVariadicArg(1));
            long r = (long) h.invokeExact(158L /* SYS_arch_prctl */, 0x1023L /* ARCH_REQ_XCOMP_PERM */, 18L /* XFEATURE_XTILEDATA */);
            return r == 0 ? null : "arch_prctl refused the tile state (" + r + ")";
        } catch (Throwable t) {
            return t.toString();
        }
    }

    /** Loads {@code v}'s image (checking its hash) into a code page; the caller checks the CPU has its flags. */
    static Q8Native load(Variant v) throws Throwable {
        ValueLayout.OfLong j = ValueLayout.JAVA_LONG;
        ValueLayout a = ValueLayout.ADDRESS;
        // dgr_q8(type, w, rowBytes, o0, o1, nb, aq, asum, half, ad, dsum, ts, nBatch, out, outStride, ahead)
        MemorySegment entry = CodePage.loadImage(v.resource, v.sha256);
        Linker linker = Linker.nativeLinker();
        return new Q8Native(v, linker.downcallHandle(entry, FunctionDescriptor.ofVoid(j, j, j, j, j, j, a, a, a, a, a, j, j, a, j, j),
                Linker.Option.critical(true)), linker.downcallHandle(entry, FunctionDescriptor.ofVoid(j, a, j, j, j, j, a, a, a, a, a, j, j, a, j, j),
                Linker.Option.critical(true)));
    }

    /**
     * {@link Q8Input#roundRows}'s bytes for batch rows {@code [r0, r1)} of the input {@code in} holds
     * ({@link Q8Input#reserve}), natively: the entry's type 512 (513 per 256 values), the Java code's f32 steps in C
     * (AVX2 in both images), about twice as fast (0.57 against 1.2 ns a value, docs/engine.md).
     */
    void round(Q8Input in, int r0, int r1) {
        try {
            roundHandle.invokeExact(in.span() == Q8Input.WIDE ? 513L : 512L, in.xSeg, 0L, (long) r0, (long) r1, (long) (in.cols() / 32), in.qSeg, in.sumSeg, in.halfSeg, in.dSeg,
                    in.dTSeg, (long) in.rows(), 0L, in.dsumTSeg, 0L, 0L);
        } catch (Throwable t) {
            throw new IllegalStateException("native 8-bit rounding call failed", t);
        }
    }

    /** {@link Q8Rows#javaRows}'s results for weight rows {@code [oStart, oEnd)}, natively; {@code w} must be off-heap. */
    void rows(WeightMatrix w, Q8Input in, int nRows, float[] out, int oStart, int oEnd, Scratch s) {
        if (oEnd <= oStart) return;
        long ahead = Prefetch.ENABLED ? AHEAD_BYTES : 0, type = switch (w.layout()) {
            case Q8_0_Q8 -> 1;
            case Q4_K_Q8 -> 2;
            case Q6_K_Q8 -> 3;
            case Q5_K_Q8 -> 4;
            case IQ4_NL_Q8 -> 5;
            case IQ4_XS_Q8 -> 6;
            case MXFP4_Q8 -> 7;
            case Q2_K_Q8 -> 8;
            case Q3_K_Q8 -> 9;
            case Q4_1_Q8 -> 10;
            case Q5_0_Q8 -> 11;
            case Q5_1_Q8 -> 12;
            default -> 0;
        };
        try {
            if (AMX && nRows >= 16 && !amxHeldOff.contains(w.layout())) type |= 256;
            handle.invokeExact(type, w.data().address(), w.rowBytes(), (long) oStart, (long) oEnd, (long) (w.cols() / 32),
                    in.qSeg, in.sumSeg, in.halfSeg, in.dTSeg, in.dsumTSeg, (long) in.rows(), (long) nRows, s.segments.of(out), (long) w.rows(), ahead);
        } catch (Throwable t) {
            throw new IllegalStateException("native 8-bit kernel call failed", t);
        }
    }
}
