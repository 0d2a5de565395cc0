package dgr.engine.deepseek4;

import dgr.engine.llama.ExpertGroups;

import dgr.engine.Batch;
import dgr.engine.kernel.Scratch;
import dgr.engine.kernel.WeightMatrix;
import dgr.engine.kernel.WorkerPool;
import dgr.engine.llama.Matmuls;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * V4's mixture of experts (DSV4-SPEC 2.5) for a batch, with its own buffers (nothing is allocated
 * per step once they have grown): the router for all rows ({@link Dsv4Products}: on the caller
 * alone when small); each row's experts (hash table or biased top-k of sqrt-softplus scores); then
 * the rows are grouped by expert and every chosen expert runs in one pool dispatch for all experts
 * together (clamped SwiGLU, then behind a {@link Dsv4Gate} down), the shared expert one more slot of all rows in each, so
 * each expert's weights are read once per step whatever the batch. Last, per row, {@code w₀·y₀ + w₁·y₁ + …}
 * in the row's choice order (each product rounded before the add), then the shared expert's output.
 *
 * <p>Batch invariance: an expert's output for a row comes from the kernels' per-element sequence,
 * which does not depend on how many rows share the expert or which worker runs the chunk, and
 * the per-row sum has a fixed order; so a row's bits do not depend on its neighbours' choices.
 */
final class Dsv4Experts implements WorkerPool.Job {
    private final Dsv4Config c;
    private final Matmuls mats;
    private final int nEmbd;
    private final float[] routerScores, weights, prob, biased;
    private final int[] chosen;
    /** The shared expert's gate, up, activation and output rows (null without one). */
    private final float[] sharedGate, sharedUp, sharedHb, sharedOut;
    /** Per active slot (the last one the shared expert's in the down pass): expert, rows, and buffers. */
    private final int[] expertOf, rowsOf, filled, groupSize, slotOf, choiceSlot, choiceRow, firstChunk;
    private final float[][] in, gate, up, hb, out;
    private final AtomicInteger next = new AtomicInteger();
    private Dsv4Weights.Layer layer;
    private float[] input;
    private final Dsv4Gate passGate = new Dsv4Gate();
    private int slots, upRows, downRows, downPer, upChunks, chunks;  // downPer: down chunks of each slot, alike for all
    private float limit, sharedLimit;
    private long epoch, downEpoch;

    Dsv4Experts(Dsv4Config c, int maxRows, Matmuls mats) {
        this.c = c;
        this.mats = mats;
        this.nEmbd = c.nEmbd();
        int ne = c.nExpert(), ke = c.nExpertUsed(), choices = maxRows * ke;
        routerScores = new float[maxRows * ne];
        weights = new float[choices];
        chosen = new int[choices];
        prob = new float[ne];
        biased = new float[ne];
        int fsh = c.ffExp() * c.nShared();
        sharedGate = fsh > 0 ? new float[maxRows * fsh] : null;
        sharedUp = fsh > 0 ? new float[maxRows * fsh] : null;
        sharedHb = fsh > 0 ? new float[maxRows * fsh] : null;
        sharedOut = fsh > 0 ? new float[maxRows * nEmbd] : null;
        int maxSlots = Math.min(ne, choices) + 1;
        firstChunk = new int[maxSlots + 1];
        expertOf = new int[maxSlots];
        rowsOf = new int[maxSlots];
        filled = new int[maxSlots];
        groupSize = new int[ne];
        slotOf = new int[ne];
        choiceSlot = new int[choices];
        choiceRow = new int[choices];
        in = new float[maxSlots][];
        gate = new float[maxSlots][];
        up = new float[maxSlots][];
        hb = new float[maxSlots][];
        out = new float[maxSlots][];
    }

    /**
     * The layer's experts and shared expert on the {@code n} rows of {@code x}, into {@code y}
     * ({@code n × n_embd}); {@code first} is a dispatch begun over these rows whose last gate writes
     * {@code x} (the input mix): the router joins it.
     */
    void run(Batch b, int n, float[] x, Dsv4Weights.Layer L, float[] y, Dsv4Products first) {
        int ke = c.nExpertUsed();
        layer = L;
        first.add(L.router(), x, routerScores).run();
        for (int r = 0; r < n; r++) route(b, r, L);
        input = x;
        gather(x, n * ke, ke);
        limit = c.clampExp()[L.index()];
        sharedLimit = c.clampShexp()[L.index()];
        chunks();
        mats.pool().run(this);
        for (int r = 0; r < n; r++) {
            int t0 = r * nEmbd;
            for (int k = 0; k < ke; k++) {
                int cix = r * ke + k;
                float wk = weights[cix];
                float[] src = out[choiceSlot[cix]];
                int so = choiceRow[cix] * nEmbd;
                if (k == 0) {
                    for (int i = 0; i < nEmbd; i++) y[t0 + i] = wk * src[so + i];
                } else {
                    for (int i = 0; i < nEmbd; i++) y[t0 + i] += wk * src[so + i];
                }
            }
        }
        if (L.gateSh() != null) for (int i = 0; i < n * nEmbd; i++) y[i] += sharedOut[i];
        input = null;
    }

    /** Bytes of the router's, the shared expert's and the slots' buffers (the slots' grow with the largest groups seen). */
    long bytes() {
        long floats = routerScores.length + weights.length + prob.length + biased.length;
        for (float[] a : new float[][] {sharedGate, sharedUp, sharedHb, sharedOut}) floats += a == null ? 0 : a.length;
        for (float[][] slot : new float[][][] {in, gate, up, hb, out}) {
            for (float[] a : slot) floats += a == null ? 0 : a.length;
        }
        long ints = (long) chosen.length + expertOf.length + rowsOf.length + filled.length + groupSize.length + slotOf.length
                + choiceSlot.length + choiceRow.length + firstChunk.length;
        return 4 * (floats + ints);
    }

    /** Row {@code r}'s experts and weights (2.5): sqrt(softplus) probabilities, hash or biased top-k, normalised, scaled. */
    private void route(Batch b, int r, Dsv4Weights.Layer L) {
        int ne = c.nExpert(), ke = c.nExpertUsed(), o = r * ke;
        for (int e = 0; e < ne; e++) {
            float z = routerScores[r * ne + e];
            prob[e] = (float) Math.sqrt(z > 20f ? z : Math.log1p(Math.exp(z)));
        }
        if (L.hashRouted()) {
            System.arraycopy(L.tid2eid(), b.token(r) * ke, chosen, o, ke);
        } else {
            float[] bias = L.probBias();
            for (int e = 0; e < ne; e++) biased[e] = prob[e] + bias[e];
            // The k highest biased scores, ties to the lower expert, in descending order.
            for (int j = 0; j < ke; j++) {
                int best = -1;
                for (int e = 0; e < ne; e++) {
                    if (taken(o, j, e)) continue;
                    if (best < 0 || Float.compare(biased[e], biased[best]) > 0) best = e;
                }
                chosen[o + j] = best;
            }
        }
        float sum = 0f;
        for (int j = 0; j < ke; j++) { weights[o + j] = prob[chosen[o + j]]; sum += weights[o + j]; }
        if (c.expertWeightsNorm()) {
            float den = Math.max(sum, 6.103515625e-5f);
            for (int j = 0; j < ke; j++) weights[o + j] /= den;
        }
        float sc = c.expertWeightsScale();
        if (sc != 0f && sc != 1f) for (int j = 0; j < ke; j++) weights[o + j] *= sc;
    }

    private boolean taken(int o, int j, int e) {
        for (int i = 0; i < j; i++) if (chosen[o + i] == e) return true;
        return false;
    }

    /**
     * Groups the {@code choices} (row, choice) pairs by expert, copying each pair's input row into
     * its expert's buffers. Active experts take slots largest group first (lower index first among
     * equals), so slot {@code a} never holds more than {@code choices / (a + 1)} rows and the
     * biggest experts' chunks are handed out first. The shared expert takes the slot after them.
     */
    private void gather(float[] x, int choices, int ke) {
        int ne = c.nExpert(), ff = c.ffExp();
        int active = ExpertGroups.order(chosen, choices, ne, groupSize, expertOf);
        for (int a = 0; a < active; a++) {
            int e = expertOf[a], m = groupSize[e];
            rowsOf[a] = m;
            slotOf[e] = a;
            filled[a] = 0;
            in[a] = ExpertGroups.grow(in[a], m * nEmbd);
            out[a] = ExpertGroups.grow(out[a], m * nEmbd);
            gate[a] = ExpertGroups.grow(gate[a], m * ff);
            up[a] = ExpertGroups.grow(up[a], m * ff);
            hb[a] = ExpertGroups.grow(hb[a], m * ff);
        }
        for (int i = 0; i < choices; i++) {
            int a = slotOf[chosen[i]], m = filled[a]++;
            System.arraycopy(x, (i / ke) * nEmbd, in[a], m * nEmbd, nEmbd);
            choiceSlot[i] = a;
            choiceRow[i] = m;
        }
        slots = active;
        if (layer.gateSh() != null) {
            // The shared expert joins both passes as one more slot of all rows (its buffers are its
            // own: slot arrays are reused by the next layer's experts).
            expertOf[active] = -1;
            rowsOf[active] = choices / ke;
        }
    }

    /**
     * Lays out the dispatch's chunks: first the SwiGLU pass (gate and up rows of the routed experts
     * and the shared one), then, behind the {@link Dsv4Gate}, the down pass (theirs and the shared
     * one's): one dispatch, where two passes would cost a barrier between them.
     */
    private void chunks() {
        int n = layer.gateSh() == null ? slots : slots + 1;
        upRows = Matmuls.expertChunkRows(layer.gateExp()[0]);
        downRows = Matmuls.expertChunkRows(layer.downExp()[0]);
        firstChunk[0] = 0;
        for (int a = 0; a < n; a++) {
            int rows = expertOf[a] < 0 ? layer.gateSh().rows() : c.ffExp();
            firstChunk[a + 1] = firstChunk[a] + (rows + upRows - 1) / upRows;
        }
        upChunks = firstChunk[n];
        downPer = (nEmbd + downRows - 1) / downRows;
        chunks = upChunks + n * downPer;
        passGate.arm(upChunks, null);
        next.set(0);
        epoch = mats.nextEpoch();
        downEpoch = mats.nextEpoch();
    }

    @Override
    public void run(int worker, int workers) {
        Scratch s = mats.scratch(worker);
        s.epoch = epoch;
        int ff = c.ffExp();
        int a = 0;
        boolean down = false;
        for (int k = next.getAndIncrement(); k < chunks; k = next.getAndIncrement()) {
            try {
                if (k < upChunks) {
                    while (k >= firstChunk[a + 1]) a++;
                    int e = expertOf[a], m = rowsOf[a];
                    int rows = e < 0 ? layer.gateSh().rows() : ff;
                    int o0 = (k - firstChunk[a]) * upRows, o1 = Math.min(rows, o0 + upRows);
                    if (e < 0) {
                        mats.kernels().matmul(layer.gateSh(), input, m, sharedGate, o0, o1, s);
                        mats.kernels().matmul(layer.upSh(), input, m, sharedUp, o0, o1, s);
                        Dsv4Kernels.swiglu(sharedGate, sharedUp, sharedHb, m, rows, o0, o1, sharedLimit);
                    } else {
                        mats.kernels().matmul(layer.gateExp()[e], in[a], m, gate[a], o0, o1, s);
                        mats.kernels().matmul(layer.upExp()[e], in[a], m, up[a], o0, o1, s);
                        Dsv4Kernels.swiglu(gate[a], up[a], hb[a], m, ff, o0, o1, limit);
                    }
                    passGate.chunkDone();
                } else {
                    if (!down) {
                        passGate.await();
                        s.epoch = downEpoch;  // the activations were written behind the gate: no cache from before it
                        down = true;
                    }
                    int d = k - upChunks;
                    a = d / downPer;
                    int e = expertOf[a], m = rowsOf[a];
                    int o0 = (d % downPer) * downRows, o1 = Math.min(nEmbd, o0 + downRows);
                    if (e < 0) mats.kernels().matmul(layer.downSh(), sharedHb, m, sharedOut, o0, o1, s);
                    else mats.kernels().matmul(layer.downExp()[e], hb[a], m, out[a], o0, o1, s);
                }
            } catch (RuntimeException | Error ex) {
                passGate.fail();
                throw ex;
            }
        }
    }

}
