package dgr.engine.llama;

import static org.assertj.core.api.Assertions.assertThat;

import dgr.engine.Batch;
import dgr.engine.Engine;
import dgr.engine.EngineOptions;
import dgr.engine.StateSlot;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Garbage made per step is what the serving heap grows by between collections: a decode step past
 * several attention tiles, once compiled, allocates nothing on the calling thread or the engine's
 * workers, whatever the cache type. (A static final vector blended in {@code OnlineSoftmax.tile} once
 * cost 768 bytes per tile call: 32 KB per step on this model at depth 300, 1.8 MB on llama-1b.)
 *
 * <p>In a JVM of its own (engine/pom.xml, "own-jvm"), as a node's is: after BatchInvarianceTest had
 * driven every engine and cache type through the same attention call sites, C2 compiled them
 * without inlining the vector helpers and one case boxed vectors, 344 KB a step.
 */
@Tag("own-jvm")
class DecodeAllocationTest {
    @ParameterizedTest(name = "{0} {1} {2}")
    @CsvSource({"Q4_0, Q8, f32", "Q4_0, SIMD, q8_0", "Q8_0, SIMD, f16"})
    void decodeStepsPastSeveralTilesAllocateNothingOnceCompiled(String type, EngineOptions.Kind kind, String cache) {
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
            System.out.printf("DecodeAllocationTest %s %s %s: %d rounds, least %d bytes%n", type, kind, cache, round, least);
            assertThat(least).as("bytes allocated by 16 decode steps, least of up to 200 rounds").isLessThan(1024);
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
