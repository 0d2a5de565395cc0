package dgr.engine.llama;

import dgr.engine.Batch;
import dgr.engine.Engine;
import dgr.engine.EngineOptions;
import dgr.engine.Engines;
import dgr.engine.ForwardResult;
import dgr.engine.KvCacheType;
import dgr.engine.KvCacheTypes;
import dgr.engine.StateSlot;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * K/V cache types side by side in one JVM: for each type an engine and one session prefilled to
 * {@code --depth} positions (its prompt speed printed), then decode at that depth in alternating
 * rounds of {@code --steps} tokens per type, so the machine's load falls on every type alike.
 *
 * <pre>
 * java --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED -XX:ObjectAlignmentInBytes=32 -cp ... \
 *      dgr.engine.llama.CacheDepthBench MODEL.gguf [--depth 4096] [--types f32,f16,q8_0] [--steps 16] [--rounds 3] [--threads 2] [--chunk 64]
 * </pre>
 */
public final class CacheDepthBench {
    private CacheDepthBench() {}

    public static void main(String[] args) {
        Path model = null;
        int depth = 4096, steps = 16, rounds = 3, threads = 2, chunk = 64;
        String types = "f32,f16";
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--depth" -> depth = Integer.parseInt(args[++i]);
                case "--types" -> types = args[++i];
                case "--steps" -> steps = Integer.parseInt(args[++i]);
                case "--rounds" -> rounds = Integer.parseInt(args[++i]);
                case "--threads" -> threads = Integer.parseInt(args[++i]);
                case "--chunk" -> chunk = Integer.parseInt(args[++i]);
                default -> model = Path.of(args[i]);
            }
        }
        if (model == null) {
            throw new IllegalArgumentException("usage: CacheDepthBench MODEL.gguf [--depth N] [--types f32,f16,bf16,q8_0] [--steps N] "
                    + "[--rounds N] [--threads N] [--chunk N]");
        }
        List<KvCacheType> ts = Arrays.stream(types.split(",")).map(t -> KvCacheType.ofFlag("--types", t)).toList();
        List<Engine> engines = new ArrayList<>();
        List<StateSlot> slots = new ArrayList<>();
        int[] next = new int[ts.size()];
        double[][] rates = new double[ts.size()][rounds];
        try {
            for (int i = 0; i < ts.size(); i++) {
                EngineOptions o = EngineOptions.defaults().withThreads(threads).withMaxRows(chunk)
                        .withContextLength(depth + steps * rounds + 16).withCacheTypes(KvCacheTypes.of(ts.get(i)));
                Engine e = Engines.load(model, o);
                engines.add(e);
                StateSlot slot = e.openSlot();
                slots.add(slot);
                Batch batch = new Batch(chunk, e.boundarySchema().rowWidth());
                long t0 = System.nanoTime(), c0 = DecodeBench.cpuNanos();
                for (int p = 0; p < depth; ) {
                    batch.clear();
                    for (int r = 0; r < chunk && p < depth; r++, p++) batch.addToken(slot, p, 100 + (p * 31) % 1000, p == depth - 1);
                    ForwardResult fr = e.forward(batch);
                    if (p == depth) next[i] = dgr.engine.sampler.GreedySampler.argmax(fr.outputArray(), fr.outputOffset(batch.size() - 1), fr.outputWidth());
                }
                var r = new DecodeBench.Rate(depth, System.nanoTime() - t0, DecodeBench.cpuNanos() - c0, threads);
                System.out.printf("%s: engine %s, state %s; prompt %d tokens, %d per forward: %.2f tok/s wall, %.2f by CPU time  load %s%n",
                        ts.get(i), e.id(), e.stateLayout().id(), depth, chunk, r.wall(), r.cpu(), DecodeBench.load());
            }
            for (int round = 0; round < rounds; round++) {
                for (int i = 0; i < ts.size(); i++) {
                    Engine e = engines.get(i);
                    Batch batch = new Batch(1, e.boundarySchema().rowWidth());
                    long t0 = System.nanoTime(), c0 = DecodeBench.cpuNanos();
                    for (int s = 0; s < steps; s++) {
                        batch.clear();
                        batch.addToken(slots.get(i), slots.get(i).length(), next[i], true);
                        ForwardResult fr = e.forward(batch);
                        next[i] = dgr.engine.sampler.GreedySampler.argmax(fr.outputArray(), fr.outputOffset(0), fr.outputWidth());
                    }
                    var r = new DecodeBench.Rate(steps, System.nanoTime() - t0, DecodeBench.cpuNanos() - c0, threads);
                    rates[i][round] = r.cpu();
                    System.out.printf("round %d %s: decode B=1 at depth %d: %.2f tok/s wall, %.2f by CPU time  load %s%n",
                            round, ts.get(i), depth, r.wall(), r.cpu(), DecodeBench.load());
                }
            }
            for (int i = 0; i < ts.size(); i++) {
                double[] s = rates[i].clone();
                Arrays.sort(s);
                System.out.printf("%s: decode at depth %d, median of %d rounds by CPU time: %.2f tok/s (%.2fx %s)%n", ts.get(i), depth,
                        rounds, s[rounds / 2], s[rounds / 2] / median(rates[0]), ts.get(0));
            }
        } finally {
            slots.forEach(StateSlot::close);
            engines.forEach(Engine::close);
        }
    }

    private static double median(double[] a) {
        double[] s = a.clone();
        Arrays.sort(s);
        return s[s.length / 2];
    }
}
