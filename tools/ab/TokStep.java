package dgr.engine.llama;

import dgr.engine.*;
import java.nio.file.Path;

/**
 * One engine decoding B sessions a step at a time; compiled against, and loaded with, each build by TwoBuilds.
 * The engine is {@code -Ddgr.ab.engine} ({@code auto}, {@code simd}, {@code q8}, {@code scalar}; run.sh passes {@code $ENGINE}).
 */
public final class TokStep {
    final Engine e; final StateSlot[] slots; final int[] next; final Batch batch;
    public TokStep(String model, int threads, int b) {
        e = Engines.load(Path.of(model), EngineOptions.defaults().withKind(EngineOptions.Kind.ofFlag(System.getProperty("dgr.ab.engine", "auto"))).withThreads(threads).withMaxRows(Math.max(4, b)).withContextLength(2048));
        DecodeBench.decode(e, 1, 8);
        DecodeBench.decode(e, Math.min(4, b), 4);
        slots = new StateSlot[b]; next = new int[b];
        batch = new Batch(e.features().maxRows(), e.boundarySchema().rowWidth());
        for (int s = 0; s < b; s++) {
            slots[s] = e.openSlot();
            batch.clear();
            for (int p = 0; p < 4; p++) batch.addToken(slots[s], p, 100 + 7 * s + p, p == 3);
            ForwardResult r = e.forward(batch);
            next[s] = dgr.engine.sampler.GreedySampler.argmax(r.outputArray(), r.outputOffset(3), r.outputWidth());
        }
    }
    public long step() {
        batch.clear();
        for (int s = 0; s < slots.length; s++) batch.addToken(slots[s], slots[s].length(), next[s], true);
        long t0 = System.nanoTime();
        ForwardResult r = e.forward(batch);
        long dt = System.nanoTime() - t0;
        for (int s = 0; s < slots.length; s++) next[s] = dgr.engine.sampler.GreedySampler.argmax(r.outputArray(), r.outputOffset(s), r.outputWidth());
        return dt;
    }
}
