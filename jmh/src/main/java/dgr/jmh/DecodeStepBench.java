package dgr.jmh;

import dgr.engine.Batch;
import dgr.engine.Engine;
import dgr.engine.EngineOptions;
import dgr.engine.Engines;
import dgr.engine.ForwardResult;
import dgr.engine.StateSlot;
import dgr.gguf.synth.QuantMix;
import dgr.gguf.synth.Synth;
import dgr.gguf.synth.SynthPreset;
import java.nio.file.Files;
import java.nio.file.Path;
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
 * One decode step (one forward of {@code batch} sessions, one row each, logits for all) of a
 * synthesized model on the SIMD engine, one thread. Each session starts from 64 positions and,
 * once at 320, is rolled back to 264 (a roll-back sliding-window layers still allow with their
 * window of 8), so the step stays in steady state. Run with
 * {@code -prof gc}: {@code gc.alloc.rate.norm} is the bytes a step allocates, which the engine's
 * contract says is none.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"--add-modules", "jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED",
        "-XX:ObjectAlignmentInBytes=32", "-XX:+UseParallelGC"})
public class DecodeStepBench {
    private static final int KEEP = 64, ROLL_BACK_AT = 320, BACK_TO = 264;

    /** A synth preset: llama-tiny (dense), mixtral-tiny (experts), gemma3-tiny (sliding windows). */
    @Param({"llama-tiny", "mixtral-tiny", "gemma3-tiny"})
    public String preset;

    @Param({"Q4_0"})
    public String quant;

    @Param({"1", "8"})
    public int batch;

    private Path dir;
    private Engine engine;
    private StateSlot[] slots;
    private int[] next;
    private Batch rows;

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        dir = Files.createTempDirectory("dgr-jmh");
        Path model = dir.resolve(preset + "-" + quant + ".gguf");
        Synth.write(SynthPreset.byName(preset), QuantMix.parse(quant), 7, model);
        engine = Engines.load(model, EngineOptions.defaults().withThreads(1).withMaxRows(Math.max(KEEP, batch)));
        rows = new Batch(engine.features().maxRows(), engine.boundarySchema().rowWidth());
        slots = new StateSlot[batch];
        next = new int[batch];
        for (int s = 0; s < batch; s++) {
            slots[s] = engine.openSlot();
            rows.clear();
            for (int p = 0; p < KEEP; p++) rows.addToken(slots[s], p, 3 + (7 * s + 13 * p) % 900, p == KEEP - 1);
            engine.forward(rows);
            next[s] = 5 + s;
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() throws Exception {
        for (StateSlot s : slots) s.close();
        engine.close();
        try (var files = Files.list(dir)) {
            for (Path p : files.toList()) Files.delete(p);
        }
        Files.delete(dir);
    }

    @Benchmark
    public float step() {
        rows.clear();
        for (int s = 0; s < batch; s++) {
            if (slots[s].length() >= ROLL_BACK_AT) slots[s].truncate(BACK_TO);
            rows.addToken(slots[s], slots[s].length(), next[s], true);
        }
        ForwardResult r = engine.forward(rows);
        float[] out = r.outputArray();
        int width = r.outputWidth();
        for (int s = 0; s < batch; s++) {
            int o = r.outputOffset(s), best = 0;
            for (int i = 1; i < width; i++) if (out[o + i] > out[o + best]) best = i;
            next[s] = best;
        }
        return out[0];
    }
}
