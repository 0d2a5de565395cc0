package dgr.engine.llama;

import static org.assertj.core.api.Assertions.assertThat;

import dgr.engine.Batch;
import dgr.engine.Engine;
import dgr.engine.EngineOptions;
import dgr.engine.StateSlot;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Garbage made per step is what the serving heap grows by between collections: a decode step past
 * several attention tiles, once compiled, allocates nothing on the calling thread or the engine's
 * workers, whatever the cache type. (A static final vector blended in {@code OnlineSoftmax.tile} once
 * cost 768 bytes per tile call: 32 KB per step on this model at depth 300, 1.8 MB on llama-1b.)
 *
 * <p>Each case is measured in a JVM of its own, as a node's is: what C2 compiles depends on every
 * configuration run before it in the same JVM (BatchInvarianceTest drives every engine and cache
 * type through the same attention call sites; after it, C2 compiled them without inlining the
 * vector helpers and one case boxed vectors, 344 KB a step).
 *
 * <p>Up to {@link #JVMS} JVMs per case, passing at the first that allocates nothing: now and then
 * C2 compiles one vector operation of the step as a call, not inlined, and the vector it takes
 * or returns is boxed, one box per call for the rest of that process. On the 2-vCPU Intel VM
 * (2026-12-03) 6 of about 130 fresh JVMs did so, each at another place (SpanKernels.finish's fma
 * chain, Q8Input's rounding, the f16 attention path) and each differently from run to run
 * (0.3, 5.5, 10 and 49 MB per 16 steps): the inlining decision follows the shared type profiles of the
 * Vector API's own methods and the compile queue's timing, not this code. Code that allocates by
 * itself allocates in every JVM and fails here.
 */
class DecodeAllocationTest {
    /** Fresh JVMs per case before the case fails: at about one JVM in twenty, three all unlucky is one case in 8,000. */
    private static final int JVMS = 3;

    @ParameterizedTest(name = "{0} {1} {2}")
    @CsvSource({"Q4_0, Q8, f32", "Q4_0, SIMD, q8_0", "Q8_0, SIMD, f16"})
    void decodeStepsPastSeveralTilesAllocateNothingOnceCompiled(String type, EngineOptions.Kind kind, String cache)
            throws Exception {
        List<String> runs = new ArrayList<>();
        long least = Long.MAX_VALUE;
        for (int jvm = 0; jvm < JVMS && least >= 1024; jvm++) {
            String line = measureInFreshJvm(type, kind, cache);
            runs.add(line);
            least = Long.parseLong(line.split(" ")[3]);
        }
        System.out.printf("DecodeAllocationTest %s %s %s: %s%n", type, kind, cache, runs);
        assertThat(least).as("bytes allocated by 16 decode steps, least of up to 200 rounds, in each of %d JVMs: %s",
                runs.size(), runs).isLessThan(1024);
    }

    /** One JVM's "rounds R least B" from {@link #main}, with this JVM's flags (the pom's, and any -Ddgr.* given). */
    private static String measureInFreshJvm(String type, EngineOptions.Kind kind, String cache)
            throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add(ProcessHandle.current().info().command().orElseThrow());
        for (String arg : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (!arg.startsWith("-agentlib:jdwp") && !arg.startsWith("-XX:StartFlightRecording")) command.add(arg);
        }
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), DecodeAllocationTest.class.getName(),
                type, kind.name(), cache));
        // Output to a file, not a pipe read to its end: a hung child then ends at the timeout, stopped by its handle.
        Path log = Files.createTempFile("decode-allocation", ".log");
        Process child = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        try {
            boolean ended = child.waitFor(5, TimeUnit.MINUTES);
            String out = Files.readString(log, StandardCharsets.UTF_8);
            assertThat(ended).as("measuring JVM ended within 5 minutes; it printed:%n%s", out).isTrue();
            assertThat(child.exitValue()).as("measuring JVM's exit status; it printed:%n%s", out).isZero();
            return out.lines().filter(l -> l.startsWith("rounds ")).reduce((a, b) -> b)
                    .orElseThrow(() -> new AssertionError("no result from the measuring JVM; it printed:\n" + out));
        } finally {
            child.destroyForcibly();
            Files.deleteIfExists(log);
        }
    }

    /** The measurement in this JVM: prints "rounds R least B", the least bytes 16 decode steps allocated. */
    public static void main(String[] args) throws Exception {
        String type = args[0], cache = args[2];
        EngineOptions.Kind kind = EngineOptions.Kind.valueOf(args[1]);
        var threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        try (Engine e = TinyModels.load(type, kind, 2, 64, TinyModels.cache(cache))) {
            StateSlot slot = e.openSlot();
            Batch batch = new Batch(64, e.boundarySchema().rowWidth());
            int prompt = 300; // five tiles of 64 positions
            for (int p = 0; p < prompt; p += 64) {
                batch.clear();
                int n = Math.min(64, prompt - p);
                for (int i = 0; i < n; i++) batch.addToken(slot, p + i, (p + i) * 7 % 1000, p + i == prompt - 1);
                e.forward(batch);
            }
            long[] ids = engineThreads();
            // The least of many rounds: on a loaded machine the JIT took 29 rounds to compile the step (under
            // load 23); code that allocates per step does so in every round (before the fix: 32 KB a step).
            // Reading the counters allocates their long[] (32 bytes), hence "under 1 KB", not zero.
            long least = Long.MAX_VALUE;
            long until = System.nanoTime() + 60_000_000_000L;
            int round = 0;
            for (; least >= 1024 && (round < 200 || System.nanoTime() < until); round++) {
                slot.truncate(prompt); // every round decodes positions 300 to 315
                long before = sum(threads.getThreadAllocatedBytes(ids));
                for (int step = 0; step < 16; step++) {
                    batch.clear();
                    batch.addToken(slot, slot.length(), step * 13 % 1000, true);
                    e.forward(batch);
                }
                least = Math.min(least, sum(threads.getThreadAllocatedBytes(ids)) - before);
            }
            slot.close();
            System.out.println("rounds " + round + " least " + least);
        }
    }

    /** This thread and the engine's workers (named {@code dgr-<engine>-<i>}). */
    private static long[] engineThreads() {
        List<Long> ids = new ArrayList<>(List.of(Thread.currentThread().threadId()));
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().startsWith("dgr-java-")) ids.add(t.threadId());
        }
        return ids.stream().mapToLong(Long::longValue).toArray();
    }

    private static long sum(long[] bytes) {
        long s = 0;
        for (long b : bytes) s += Math.max(0, b);
        return s;
    }
}
