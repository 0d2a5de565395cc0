package dgr.engine.llama;

import dgr.engine.*;
import java.nio.file.Path;

/** One engine: timed prompts and decode steps at a depth; loaded per build by AbPrompt. */
public final class PromptStep {
    static final int THREADS = Integer.parseInt(System.getenv().getOrDefault("AB_THREADS", "2"));
    /** Prompt rows per forward (AB_CHUNK; the scheduler's default is 64). */
    static final int CHUNK = Integer.parseInt(System.getenv().getOrDefault("AB_CHUNK", "32"));
    final Engine e; final Batch batch; StateSlot deep; int next;
    public PromptStep(String model, int threads, int depth) {
        e = Engines.load(Path.of(model), EngineOptions.defaults().withThreads(THREADS).withMaxRows(CHUNK).withContextLength(4200)
                .withCacheTypes(KvCacheTypes.of(KvCacheType.valueOf(System.getenv().getOrDefault("AB_CACHE", "F32")))));
        batch = new Batch(e.features().maxRows(), e.boundarySchema().rowWidth());
        DecodeBench.decode(e, 1, 8);
        prefill(64);
        deep = e.openSlot();
        for (int p = 0; p < depth; ) {
            batch.clear();
            for (int r = 0; r < CHUNK && p < depth; r++, p++) batch.addToken(deep, p, 100 + (p * 31) % 1000, p == depth - 1);
            ForwardResult fr = e.forward(batch);
            if (p == depth) next = dgr.engine.sampler.GreedySampler.argmax(fr.outputArray(), fr.outputOffset(batch.size() - 1), fr.outputWidth());
        }
    }
    /**
     * One thread (AB_THREADS=1): the engine runs on the calling thread alone, so its CPU time measures
     * the work whatever the machine's load; else the wall clock.
     */
    static long now() {
        return CPU ? java.lang.management.ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime() : System.nanoTime();
    }
    static final boolean CPU = THREADS == 1;
    public long prefill(int n) {
        try (StateSlot slot = e.openSlot()) {
            long t0 = now();
            for (int p = 0; p < n; ) {
                batch.clear();
                for (int r = 0; r < CHUNK && p < n; r++, p++) batch.addToken(slot, p, 100 + (p * 31) % 1000, p == n - 1);
                e.forward(batch);
            }
            return now() - t0;
        }
    }
    public long deepStep() {
        batch.clear();
        batch.addToken(deep, deep.length(), next, true);
        long t0 = now();
        ForwardResult r = e.forward(batch);
        long dt = now() - t0;
        next = dgr.engine.sampler.GreedySampler.argmax(r.outputArray(), r.outputOffset(0), r.outputWidth());
        if (deep.length() > 4150) deep.truncate(4096);
        return dt;
    }
    public String resident() throws Exception {
        StringBuilder b = new StringBuilder();
        for (String line : java.nio.file.Files.readAllLines(Path.of("/proc/self/status")))
            if (line.startsWith("VmRSS") || line.startsWith("RssAnon") || line.startsWith("RssFile")) b.append(line.replaceAll("\\s+", " ")).append("; ");
        return b.toString();
    }
}
