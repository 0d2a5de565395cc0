package dgr.jmh;

import dgr.engine.kernel.Kernels;
import dgr.engine.kernel.Scratch;
import dgr.engine.kernel.WeightMatrix;
import dgr.gguf.GgmlType;
import dgr.gguf.codec.Codecs;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * One thread, one matmul of a 2048-column weight matrix against {@code batch} activation rows, in
 * the layout the SIMD engine repacks it to: the kernels alone, weights quantized from N(0, 0.02²)
 * by the project's own codecs. Time per matmul; GFLOP/s = 2 · rows · 2048 · batch / time.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--add-modules", "jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED",
        "-XX:ObjectAlignmentInBytes=32"})
public class MatmulBench {
    static final int COLS = 2048;

    @Param({"Q4_0", "Q8_0", "Q4_K", "Q6_K"})
    public String type;

    @Param({"1", "4", "16"})
    public int batch;

    /** 256 rows keep the weights in L2 (the kernel's speed); 8192 stream them from memory (a decode step's). */
    @Param({"256", "8192"})
    public int rows;

    private Arena arena;
    private Kernels kernels;
    private WeightMatrix w;
    private float[] x, out;
    private Scratch scratch;

    @Setup(Level.Trial)
    public void setUp() {
        GgmlType t = GgmlType.valueOf(type);
        arena = Arena.ofShared();
        long rowBytes = t.bytesFor(COLS);
        MemorySegment m = arena.allocate(rowBytes * rows, 64);
        SplittableRandom rnd = new SplittableRandom(1);
        float[] row = new float[COLS];
        for (int r = 0; r < rows; r++) {
            for (int c = 0; c < COLS; c++) row[c] = (float) (rnd.nextGaussian() * 0.02);
            Codecs.of(t).quantize(row, 0, COLS, m, r * rowBytes);
        }
        kernels = Kernels.of(true);
        w = kernels.prepare(new WeightMatrix("bench", t, rows, COLS, rowBytes, m), arena);
        x = new float[batch * COLS];
        for (int i = 0; i < x.length; i++) x[i] = (float) rnd.nextGaussian();
        out = new float[batch * rows];
        scratch = new Scratch(COLS, 16);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        arena.close();
    }

    /** All rows in the engine's claims of 128 rows, as one worker walks them. */
    @Benchmark
    public float matmul() {
        for (int o = 0; o < rows; o += 128) kernels.matmul(w, x, batch, out, o, Math.min(rows, o + 128), scratch);
        return out[0];
    }
}
