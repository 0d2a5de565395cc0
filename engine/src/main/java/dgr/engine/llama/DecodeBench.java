package dgr.engine.llama;

import dgr.engine.Batch;
import dgr.engine.Engine;
import dgr.engine.EngineOptions;
import dgr.engine.Engines;
import dgr.engine.ForwardResult;
import dgr.engine.StateSlot;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Decode and prompt throughput of the llama engine, measured by hand (not a test: timings are not
 * asserted).
 *
 * <pre>
 * java --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED -XX:ObjectAlignmentInBytes=32 -cp ... dgr.engine.llama.DecodeBench MODEL.gguf|--synth-1b
 *      [--threads 2] [--steps 32] [--batches 1,2,4,8,16] [--prompt 128] [--chunk 32] [--steady 512] [--warmup 8] [--scalar | --simd | --q8]
 *      [--cache-type-k f32|f16|bf16|q8_0] [--cache-type-v ...] [--cache-type TYPE (both)]
 * </pre>
 * {@code --synth PRESET:QUANT} writes MODEL first unless it exists ({@link #synthesise}); {@code --synth-1b} is
 * {@code /tmp/dgr-synth-llama-1b-Q4_0.gguf --synth llama-1b:Q4_0}. Prints
 * the load average, batch-1 decode tok/s, aggregate decode tok/s at each batch size, prompt tok/s
 * for one session's prompt fed {@code --chunk} rows per forward, and the GC count over 512 tokens
 * of steady-state decode ({@code --steady}; it should not move: the hot path allocates nothing).
 * {@code --warmup} batch-1 steps run untimed first (8 by default; a model as small as dsv4-small
 * needs about 3,000 before the JIT has compiled its steps, as a serving node's first requests do).
 * Before the prompts, untimed prompts of 128 tokens until the JIT is quiet ({@link #warmPrompts}).
 * {@code --amx-ab ROUNDS} times each prompt with AMX and without it, alternating in this JVM
 * ({@code --amx-off Q6_K,...}: without it for those types' matrices only);
 * {@code --rounding-ab ROUNDS} with the input rounded once per dispatch and by each worker.
 * {@code --kernel-account} then runs each batch size's decode steps and each prompt once more, counting where
 * their thread time goes ({@link dgr.engine.kernel.KernelAccount}: the 8-bit matrix kernel per weight type, with
 * its rate, the rounding, the workers' waits on one another, and the rest).
 */
public final class DecodeBench {
    private DecodeBench() {}

    public static void main(String[] args) throws Exception {
        Path model = null;
        int threads = 2, steps = 32, prompt = 128, chunk = 32, steady = 512, warmup = 8;
        int[] batches = {1, 2, 4, 8, 16}, prompts = null, depths = {};
        int amxRounds = 0, roundingRounds = 0;
        boolean account = false;
        EngineOptions.Kind kind = EngineOptions.Kind.AUTO;
        dgr.engine.KvCacheType cacheK = dgr.engine.KvCacheType.F32, cacheV = dgr.engine.KvCacheType.F32;
        String synth = null;
        java.util.List<String> amxOff = null;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--synth-1b" -> {
                    model = Path.of("/tmp/dgr-synth-llama-1b-Q4_0.gguf");
                    synth = "llama-1b:Q4_0";
                }
                case "--synth" -> synth = args[++i];
                case "--threads" -> threads = Integer.parseInt(args[++i]);
                case "--steps" -> steps = Integer.parseInt(args[++i]);
                case "--prompt" -> prompt = Integer.parseInt(args[++i]);
                case "--prompts" -> prompts = ints(args[++i]);
                case "--depths" -> depths = ints(args[++i]);
                case "--chunk" -> chunk = Integer.parseInt(args[++i]);
                case "--steady" -> steady = Integer.parseInt(args[++i]);
                case "--warmup" -> warmup = Integer.parseInt(args[++i]);
                case "--batches" -> batches = ints(args[++i]);
                case "--amx-ab" -> amxRounds = Integer.parseInt(args[++i]);
                case "--amx-off" -> amxOff = java.util.List.of(args[++i].split(","));
                case "--rounding-ab" -> roundingRounds = Integer.parseInt(args[++i]);
                case "--kernel-account" -> account = true;
                case "--scalar" -> kind = EngineOptions.Kind.SCALAR;
                case "--q8" -> kind = EngineOptions.Kind.Q8;
                case "--simd" -> kind = EngineOptions.Kind.SIMD;
                case "--cache-type-k", "-ctk" -> cacheK = dgr.engine.KvCacheType.ofFlag(args[i], args[++i]);
                case "--cache-type-v", "-ctv" -> cacheV = dgr.engine.KvCacheType.ofFlag(args[i], args[++i]);
                case "--cache-type" -> cacheK = cacheV = dgr.engine.KvCacheType.ofFlag(args[i], args[++i]);
                default -> model = Path.of(args[i]);
            }
        }
        if (model == null) throw new IllegalArgumentException("usage: DecodeBench MODEL.gguf|--synth-1b [--synth PRESET:QUANT] [--threads N] [--steps N] "
                + "[--batches 1,2,4,8,16] [--prompt N | --prompts N,N,..] [--depths N,N,..] [--chunk N] [--steady TOKENS] [--warmup STEPS] "
                + "[--scalar | --simd | --q8] [--amx-ab ROUNDS [--amx-off TYPE,..]] [--rounding-ab ROUNDS] [--kernel-account] [--cache-type-k TYPE] [--cache-type-v TYPE] [--cache-type TYPE]");
        if (amxOff != null) dgr.engine.kernel.Q8Kernels.amxForBenchmark(true, amxOff);  // a misspelt type fails here, before the load
        if (synth != null) synthesise(synth, model);
        if (prompts == null) prompts = prompt > 0 ? new int[] {prompt} : new int[0];
        int maxB = java.util.Arrays.stream(batches).max().orElse(1);
        int longest = Math.max(java.util.Arrays.stream(prompts).max().orElse(0), java.util.Arrays.stream(depths).max().orElse(0) + steps);
        EngineOptions o = EngineOptions.defaults().withKind(kind).withThreads(threads)
                .withMaxRows(Math.max(maxB, chunk)).withContextLength(Math.max(1024, longest + 16))
                .withCacheTypes(new dgr.engine.KvCacheTypes(cacheK, cacheV));
        try (Engine e = Engines.load(model, o)) {
            System.out.printf("model %s, engine %s, threads %d, cache %s, %d layers, n_embd %d, vocab %d; %s%n", model, e.id(), threads,
                    o.cacheTypes(), e.info().nLayers(), e.info().nEmbd(), e.info().vocabSize(), dgr.engine.Engines.kernelMemoryReport());
            System.out.println("resident after load: " + resident());
            // warm-up: JIT compiles the kernels (a small model's first thousands of steps run partly compiled), in sessions
            // of at most 512 steps so that any count fits the context
            for (int done = 0; done < warmup; done += 512) decode(e, 1, Math.min(512, warmup - done));
            decode(e, Math.min(4, maxB), 4);
            for (int b : batches) {
                Rate r = decode(e, b, steps);
                System.out.printf("decode B=%2d  aggregate %7.2f tok/s wall, %7.2f tok/s by CPU time  (%6.2f per session)  load %s%n",
                        b, r.wall(), r.cpu(), r.cpu() / b, load());
            }
            if (prompts.length > 0) {
                int passes = warmPrompts(e, Math.min(128, prompts[0]), chunk);
                System.out.printf("prompt warm-up: %d untimed prompts of %d tokens, until the JIT compiled under %d ms in one%n", passes,
                        Math.min(128, prompts[0]), dgr.engine.WarmUp.QUIET_JIT_MS);
            }
            if (amxRounds > 0) {
                var off = amxOff;
                ab(e, prompts, chunk, amxRounds, "AMX", off == null ? "VNNI" : "VNNI for " + String.join(",", off),
                        on -> { if (off == null) dgr.engine.kernel.Q8Kernels.amxForBenchmark(on); else dgr.engine.kernel.Q8Kernels.amxForBenchmark(on, off); });
            }
            if (roundingRounds > 0) {
                ab(e, prompts, chunk, roundingRounds, "rounding shared", "rounding per worker", dgr.engine.kernel.SharedRounding::shareForBenchmark);
            }
            int[] timed = amxRounds > 0 || roundingRounds > 0 ? new int[0] : prompts;  // an A/B has measured the prompts
            for (int n : timed) {
                Rate r = prefill(e, n, chunk);
                System.out.printf("prompt %d tokens, %d per forward: %7.2f tok/s wall, %7.2f tok/s by CPU time  load %s%n",
                        n, chunk, r.wall(), r.cpu(), load());
            }
            if (account) {
                int steps1 = steps, chunk1 = chunk;  // the lambdas' copies
                for (int b : batches) System.out.println(accounted("decode B=" + b, () -> decode(e, b, steps1)));
                for (int n : prompts) System.out.println(accounted("prompt " + n + " tokens, " + chunk + " per forward", () -> prefill(e, n, chunk1)));
            }
            for (int d : depths) {
                Rate r = decodeAtDepth(e, d, chunk, steps);
                System.out.printf("decode B= 1 at depth %d: %7.2f tok/s wall, %7.2f tok/s by CPU time  load %s%n",
                        d, r.wall(), r.cpu(), load());
            }
            if (steady > 0) {
                // Steady state: sessions that reuse pooled K/V pages; the GC count must not move.
                int sb = Math.min(8, maxB);
                decode(e, sb, Math.max(1, steady / sb / 8));
                // Collect what loading and warm-up left, so a collection below means the steady
                // steps allocated (a young generation nearly full of warm-up garbage would
                // otherwise tip over on anything, a JIT recompilation's few objects included).
                System.gc();
                long gc0 = gcCount();
                Rate r = decode(e, sb, Math.max(1, steady / sb));
                long gc1 = gcCount();
                System.out.printf("steady state B=%d, %d tokens: %.2f tok/s wall, %.2f by CPU time, GC collections %d -> %d%n",
                        sb, r.tokens(), r.wall(), r.cpu(), gc0, gc1);
            }
        }
    }

    /**
     * Untimed prompts of {@code n} tokens until one passes with the JIT compiling under {@link dgr.engine.WarmUp#QUIET_JIT_MS}
     * (at most 8): a fresh JVM's first prompts run while C2 still compiles the prompt path's helpers, so a
     * prompt timed then measures the compiler, not the engine a serving node runs after its warm-up.
     */
    static int warmPrompts(Engine e, int n, int chunk) {
        var jit = java.lang.management.ManagementFactory.getCompilationMXBean();
        int passes = 0;
        while (passes < 8) {
            long before = jit.getTotalCompilationTime();
            prefill(e, n, chunk);
            passes++;
            if (jit.getTotalCompilationTime() - before < dgr.engine.WarmUp.QUIET_JIT_MS) break;
        }
        return passes;
    }

    /** A prompt's token at position {@code p}, within the model's vocabulary (dsv4-small's is 1025). */
    static int token(Engine e, int p) {
        return (100 + (p * 31) % 1000) % e.info().vocabSize();
    }

    static String load() {
        return String.format("%.2f", ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
    }

    /** One session's {@code n}-token prompt, {@code chunk} rows per forward, logits for the last row only. */
    static Rate prefill(Engine e, int n, int chunk) {
        Batch batch = new Batch(e.features().maxRows(), e.boundarySchema().rowWidth());
        try (StateSlot slot = e.openSlot()) {
            if (accounting) dgr.engine.kernel.KernelAccount.count(true);  // after the set-up: the counts cover the timed work
            long t0 = System.nanoTime(), c0 = cpuNanos();
            for (int p = 0; p < n; ) {
                batch.clear();
                for (int r = 0; r < chunk && p < n; r++, p++) batch.addToken(slot, p, token(e, p), p == n - 1);
                e.forward(batch);
            }
            if (accounting) dgr.engine.kernel.KernelAccount.count(false);
            return new Rate(n, System.nanoTime() - t0, cpuNanos() - c0, e.features().threads());
        }
    }

    /** One session: a {@code depth}-token prompt ({@code chunk} rows per forward, untimed), then {@code steps} decode steps timed. */
    static Rate decodeAtDepth(Engine e, int depth, int chunk, int steps) {
        Batch batch = new Batch(e.features().maxRows(), e.boundarySchema().rowWidth());
        try (StateSlot slot = e.openSlot()) {
            int next = 0;
            for (int p = 0; p < depth; ) {
                batch.clear();
                for (int r = 0; r < chunk && p < depth; r++, p++) batch.addToken(slot, p, token(e, p), p == depth - 1);
                ForwardResult fr = e.forward(batch);
                if (p == depth) next = dgr.engine.sampler.GreedySampler.argmax(fr.outputArray(), fr.outputOffset(batch.size() - 1), fr.outputWidth());
            }
            long t0 = System.nanoTime(), c0 = cpuNanos();
            for (int i = 0; i < steps; i++) {
                batch.clear();
                batch.addToken(slot, slot.length(), next, true);
                ForwardResult fr = e.forward(batch);
                next = dgr.engine.sampler.GreedySampler.argmax(fr.outputArray(), fr.outputOffset(0), fr.outputWidth());
            }
            return new Rate(steps, System.nanoTime() - t0, cpuNanos() - c0, e.features().threads());
        }
    }

    /** VmRSS, RssAnon and RssFile from /proc/self/status (Linux), or why not. */
    static String resident() {
        try {
            StringBuilder b = new StringBuilder();
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("VmRSS") || line.startsWith("RssAnon") || line.startsWith("RssFile")) {
                    b.append(line.replaceAll("\\s+", " ")).append("; ");
                }
            }
            return b.toString();
        } catch (java.io.IOException e) {
            return e.toString();
        }
    }

    /** Set by {@link #accounted}: {@link #prefill} and {@link #decode} count their timed work, not their set-up. */
    private static boolean accounting;

    /**
     * {@code work} once more with {@link dgr.engine.kernel.KernelAccount} counting its timed part: each weight type's
     * share of the threads' time (wall time × threads) and its kernel's rate, the rounding's share, the workers' waits, and the rest.
     */
    static String accounted(String what, java.util.function.Supplier<Rate> work) {
        accounting = true;
        Rate r;
        try {
            r = work.get();
        } finally {
            accounting = false;
            dgr.engine.kernel.KernelAccount.count(false);
        }
        double threadNanos = (double) r.wallNanos() * r.threads();
        var t = dgr.engine.kernel.KernelAccount.totals();
        StringBuilder b = new StringBuilder(String.format("kernel account, %s: %.2f tok/s wall, %d threads;", what, r.wall(), r.threads()));
        for (var m : t.matrices()) {
            String type = m.layout().name().replace("_Q8", "");
            b.append(String.format(" %s %.1f%% (%.0f GOPS),", type, 100 * m.nanos() / threadNanos, m.gops()));
        }
        long rest = Math.round(threadNanos) - t.matrixNanos() - t.roundingNanos() - t.waitingNanos();
        return b.append(String.format(" rounding %.1f%%, waits %.1f%%, rest %.1f%%  load %s", 100 * t.roundingNanos() / threadNanos,
                100 * t.waitingNanos() / threadNanos, 100 * rest / threadNanos, load())).toString();
    }

    static int[] ints(String csv) {
        return java.util.Arrays.stream(csv.split(",")).mapToInt(Integer::parseInt).toArray();
    }

    /**
     * {@code --amx-ab ROUNDS} (and {@code --rounding-ab}): each prompt, ROUNDS times with AMX and
     * ROUNDS times with the VNNI path (shared rounding and each worker's own), alternating in this
     * JVM (same JIT state, the neighbours' load shared alike); prints each side's best and median
     * rate by CPU time.
     */
    static void ab(Engine e, int[] prompts, int chunk, int rounds, String onName, String offName,
                   java.util.function.Consumer<Boolean> set) {
        for (int n : prompts) {
            double[][] cpu = new double[2][rounds];
            for (int r = 0; r < rounds; r++) {
                for (int side = 0; side < 2; side++) {
                    boolean on = (r + side) % 2 == 0;
                    set.accept(on);
                    cpu[on ? 0 : 1][r] = prefill(e, n, chunk).cpu();
                }
            }
            set.accept(true);
            for (double[] c : cpu) java.util.Arrays.sort(c);
            System.out.printf("prompt %d tokens, %d per forward, %d rounds each, tok/s by CPU time: %s best %.2f median %.2f, "
                    + "%s best %.2f median %.2f  load %s%n", n, chunk, rounds, onName, cpu[0][rounds - 1], cpu[0][rounds / 2],
                    offName, cpu[1][rounds - 1], cpu[1][rounds / 2], load());
        }
    }

    /**
     * Tokens over wall time, and over this process's CPU time divided by the engine's threads: the
     * rate the engine would reach with its cores to itself. On a shared machine the wall rate
     * mostly measures the neighbours; the CPU rate still includes workers spinning at a barrier
     * while the other is descheduled, so it errs low, never high.
     */
    record Rate(long tokens, long wallNanos, long cpuNanos, int threads) {
        double wall() { return tokens / (wallNanos / 1e9); }
        double cpu() { return tokens / (cpuNanos / 1e9 / threads); }
    }

    static long cpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
    }

    /** Opens {@code b} sessions, prefills 4 tokens each, then decodes {@code steps} rows per session. */
    static Rate decode(Engine e, int b, int steps) {
        StateSlot[] slots = new StateSlot[b];
        int[] next = new int[b];
        Batch batch = new Batch(e.features().maxRows(), e.boundarySchema().rowWidth());
        for (int s = 0; s < b; s++) {
            slots[s] = e.openSlot();
            batch.clear();
            for (int p = 0; p < 4; p++) batch.addToken(slots[s], p, 100 + 7 * s + p, p == 3);
            ForwardResult r = e.forward(batch);
            next[s] = dgr.engine.sampler.GreedySampler.argmax(r.outputArray(), r.outputOffset(3), r.outputWidth());
        }
        if (accounting) dgr.engine.kernel.KernelAccount.count(true);  // after the set-up: the counts cover the timed work
        long t0 = System.nanoTime(), c0 = cpuNanos();
        for (int i = 0; i < steps; i++) {
            batch.clear();
            for (int s = 0; s < b; s++) batch.addToken(slots[s], slots[s].length(), next[s], true);
            ForwardResult r = e.forward(batch);
            for (int s = 0; s < b; s++) next[s] = dgr.engine.sampler.GreedySampler.argmax(r.outputArray(), r.outputOffset(s), r.outputWidth());
        }
        long t1 = System.nanoTime(), c1 = cpuNanos();
        if (accounting) dgr.engine.kernel.KernelAccount.count(false);
        for (StateSlot s : slots) s.close();
        return new Rate(b * steps, t1 - t0, c1 - c0, e.features().threads());
    }

    static long gcCount() {
        long n = 0;
        for (GarbageCollectorMXBean b : ManagementFactory.getGarbageCollectorMXBeans()) n += Math.max(0, b.getCollectionCount());
        return n;
    }

    /**
     * {@code --synth PRESET:QUANT}: writes MODEL as {@code dgr synth --preset PRESET --quant QUANT} does (its default
     * seed, so the same bytes) unless it exists: a machine with only a Java runtime and these classes (a device
     * machine, tools/speed/device-kit.sh) makes its own files.
     */
    private static void synthesise(String presetAndQuant, Path model) {
        int colon = presetAndQuant.indexOf(':');
        if (colon < 0) throw new IllegalArgumentException("--synth wants PRESET:QUANT (llama-1b:Q4_K_M), not '" + presetAndQuant + "'");
        if (Files.exists(model)) return;
        long t0 = System.nanoTime();
        var r = dgr.gguf.synth.Synth.write(dgr.gguf.synth.SynthPreset.byName(presetAndQuant.substring(0, colon)),
                dgr.gguf.synth.QuantMix.parse(presetAndQuant.substring(colon + 1)), dgr.gguf.synth.Synth.DEFAULT_SEED, model);
        System.out.printf("wrote %s %d bytes in %.1f s%n", r.path(), r.bytes(), (System.nanoTime() - t0) / 1e9);
    }
}
