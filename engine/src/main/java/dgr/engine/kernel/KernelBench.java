package dgr.engine.kernel;

import dgr.gguf.GgmlType;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.SplittableRandom;

/**
 * Single-thread matmul timings by hand (not a test): random weights of one type, by default 2048
 * columns × 8192 rows, four copies cycled so the weights come from memory as in a decode step
 * (one copy of 256 rows stays in L2 instead, which times the kernel alone). Prints the
 * fastest thread-CPU ms per matmul, weight GB/s and GFLOP/s for batch sizes 1, 2, 4, 8, 16 (up to
 * 64, a prompt chunk). {@code -Ddgr.bench.kernels=q8} times {@code java-q8}'s kernels (native, with
 * {@code -Ddgr.amx=false} for VNNI alone) instead of {@code java-simd}'s.
 *
 * <pre>
 * java --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED -XX:ObjectAlignmentInBytes=32 -cp ... dgr.engine.kernel.KernelBench [Q4_0|Q8_0|Q4_K|Q6_K] [reps] [batches, e.g. 1,8] [rows] [copies] [cols]
 * </pre>
 */
public final class KernelBench {
    /** Output rows per call, as the llama engine hands them to its workers ({@code -Ddgr.bench.chunk}, e.g. 128). */
    private static final int CHUNK = Integer.getInteger("dgr.bench.chunk", 32);
    /** Batch rows at most (a prompt chunk). */
    private static final int MAX_BATCH = 64;

    private KernelBench() {}

    public static void main(String[] args) {
        GgmlType type = GgmlType.valueOf(args.length > 0 ? args[0] : "Q4_0");
        int reps = args.length > 1 ? Integer.parseInt(args[1]) : 15;
        int rows = args.length > 3 ? Integer.parseInt(args[3]) : 8192, cols = args.length > 5 ? Integer.parseInt(args[5]) : 2048, copies = args.length > 4 ? Integer.parseInt(args[4]) : 4;
        long rowBytes = type.bytesFor(cols);
        WeightMatrix[] ws = new WeightMatrix[copies];
        SplittableRandom rnd = new SplittableRandom(7);
        Arena arena = Arena.ofAuto();
        Kernels k = "q8".equals(System.getProperty("dgr.bench.kernels")) ? new Q8Kernels() : new SimdKernels();
        for (int c = 0; c < copies; c++) {
            MemorySegment m = arena.allocate(rowBytes * rows, 64);
            for (long i = 0; i < m.byteSize(); i++) m.set(ValueLayout.JAVA_BYTE, i, (byte) rnd.nextInt());
            fixScales(type, m, rowBytes * rows);
            ws[c] = k.prepare(new WeightMatrix("bench" + c, type, rows, cols, rowBytes, m), arena);
        }
        float[] x = new float[MAX_BATCH * cols];
        for (int i = 0; i < x.length; i++) x[i] = (float) rnd.nextGaussian();
        float[] out = new float[MAX_BATCH * rows];
        Scratch s = new Scratch(cols, 16);
        // Thread CPU time, not wall time: on a shared machine preemption would otherwise swamp the kernel.
        java.lang.management.ThreadMXBean cpu = java.lang.management.ManagementFactory.getThreadMXBean();
        System.out.println(k.name() + "; " + SimdKernels.memoryReport());
        int[] batches = args.length > 2 ? java.util.Arrays.stream(args[2].split(",")).mapToInt(Integer::parseInt).toArray()
                : new int[] {1, 2, 4, 8, 16};
        for (int b : batches) {
            for (int i = 0; i < 3 * copies; i++) for (int o = 0; o < rows; o += CHUNK) k.matmul(ws[i % copies], x, b, out, o, o + CHUNK, s);
            long[] t = new long[reps];
            for (int r = 0; r < reps; r++) {
                long t0 = cpu.getCurrentThreadCpuTime();
                for (int o = 0; o < rows; o += CHUNK) k.matmul(ws[r % copies], x, b, out, o, o + CHUNK, s);
                t[r] = cpu.getCurrentThreadCpuTime() - t0;
            }
            java.util.Arrays.sort(t);
            double ms = t[0] / 1e6; // the fastest run: interference from other processes only ever adds time
            double med = t[reps / 2] / 1e6;
            System.out.printf("%s B=%2d  %.4f ms  %.2f GB/s  %.2f GFLOP/s  (median %.2f GB/s)%n", type, b, ms,
                    rowBytes * rows / ms / 1e6, 2.0 * rows * cols * b / ms / 1e6, rowBytes * rows / med / 1e6);
        }
    }

    /** Sets every block's f16 scale(s) to small finite values so the sums are ordinary numbers. */
    private static void fixScales(GgmlType type, MemorySegment m, long bytes) {
        ValueLayout.OfShort f16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(java.nio.ByteOrder.LITTLE_ENDIAN);
        short d = Float.floatToFloat16(0.01f);
        switch (type) {
            case Q4_0 -> { for (long o = 0; o < bytes; o += 18) m.set(f16, o, d); }
            case Q8_0 -> { for (long o = 0; o < bytes; o += 34) m.set(f16, o, d); }
            case Q4_K -> { for (long o = 0; o < bytes; o += 144) { m.set(f16, o, d); m.set(f16, o + 2, d); } }
            case Q6_K -> { for (long o = 0; o < bytes; o += 210) m.set(f16, o + 208, d); }
            default -> throw new IllegalArgumentException("bench covers Q4_0, Q8_0, Q4_K, Q6_K, not " + type);
        }
    }
}
