package dgr.engine.llama;

import dgr.engine.kernel.Scratch;
import dgr.engine.kernel.WeightMatrix;
import dgr.engine.kernel.WorkerPool;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The mixture-of-experts FFN (Mixtral, Qwen2/3-MoE, OLMoE, Granite MoE, gpt-oss, DeepSeek-V2/V3,
 * Llama 4), with its own buffers: router scores for all rows (one matmul), each row's experts
 * ({@link ExpertRouting}), then every chosen expert's rows gathered and run in two pool passes for
 * all experts together ({@link ExpertPass}: SwiGLU, then down), so each expert's weights are read
 * once per step whatever the batch; last, per row, {@code w₀·y₀ + w₁·y₁ + …} in the row's choice
 * order, each product rounded before the sum, as llama.cpp multiplies and then adds. A row's
 * outputs come from the same kernels and steps however many rows share its experts, so the result
 * is batch-invariant like the dense FFN.
 */
final class ExpertFfn {
    private final LlamaConfig cfg;
    private final LlamaConfig.Experts ex;
    private final Matmuls mats;
    /**
     * Router scores per row, the routing's probabilities and selection scores of one row, each
     * row's chosen experts and weights ({@code used} per row), and every (row, choice)'s output
     * before the weighted sum.
     */
    private final float[] routerScores, routerProbs, routerSelection, expertWeights, choiceOut;
    private final int[] chosen;
    /** The shared expert's gate scores (one per row, Qwen2-MoE), its SwiGLU buffers and its output; null without. */
    private final float[] sharedScores, sharedGate, sharedUp, sharedHb, sharedOut;
    private final ExpertPass pass;

    ExpertFfn(LlamaConfig cfg, int maxRows, Matmuls mats) {
        this.cfg = cfg;
        this.ex = cfg.experts();
        this.mats = mats;
        int r = maxRows, e = cfg.nEmbd();
        routerScores = new float[r * ex.count()];
        routerProbs = new float[ex.count()];
        routerSelection = new float[ex.count()];
        chosen = new int[r * ex.used()];
        expertWeights = new float[r * ex.used()];
        choiceOut = new float[Math.multiplyExact(r * ex.used(), e)];
        sharedScores = ex.sharedGated() ? new float[r] : null;
        boolean shared = ex.sharedFf() != 0;
        sharedGate = shared ? new float[r * ex.sharedFf()] : null;
        sharedUp = shared ? new float[r * ex.sharedFf()] : null;
        sharedHb = shared ? new float[r * ex.sharedFf()] : null;
        sharedOut = shared ? new float[r * e] : null;
        pass = new ExpertPass(ex.count(), Math.min(ex.count(), r * ex.used()), r * ex.used());
    }

    /** The layer's experts (and shared expert) on the {@code n} rows of {@code in}, into {@code out}. */
    void run(LlamaWeights.Experts w, float[] in, int n, float[] out) {
        int e = cfg.nEmbd(), used = ex.used(), count = ex.count();
        // The router and the shared expert's one-row gate read the same input: one pass for both.
        mats.begin(n).add(w.router, in, routerScores);
        if (w.sharedGateInp != null) mats.add(w.sharedGateInp, in, sharedScores);
        mats.run();
        if (w.routerBias != null) Elementwise.addBiasRows(routerScores, n, w.routerBias);
        for (int r = 0; r < n; r++) {
            ExpertRouting.route(routerScores, r * count, count, used, ex.normWeights(), ex.weightsScale(), ex.gating(),
                    w.selectionBias, ex.groups(), ex.groupsUsed(), routerProbs, routerSelection, chosen, expertWeights, r * used);
        }
        pass.gather(w, in, n * used, used, e, ex.ff(), ex.weightBeforeFfn() ? expertWeights : null);
        pass.phase(true);
        mats.pool().run(pass);
        pass.phase(false);
        mats.pool().run(pass);
        pass.scatter(choiceOut, e);
        // Llama 4's weights already scaled the experts' inputs: its outputs are summed as they are
        // (times 1, which is exact). Choice by choice, each element's sum is the same sequence.
        boolean weighed = !ex.weightBeforeFfn();
        for (int r = 0; r < n; r++) {
            int c0 = r * used, t0 = r * e;
            for (int k = 0; k < used; k++) {
                float wk = weighed ? expertWeights[c0 + k] : 1f;
                int y = (c0 + k) * e;
                if (k == 0) {
                    for (int i = 0; i < e; i++) out[t0 + i] = wk * choiceOut[y + i];
                } else {
                    for (int i = 0; i < e; i++) out[t0 + i] += wk * choiceOut[y + i];
                }
            }
        }
        if (w.sharedGate != null) shared(w, in, n, out);
    }

    /**
     * The shared expert added into {@code out}: a SwiGLU FFN every row runs. Qwen2-MoE's is scaled
     * by {@code sigmoid(g)} of the row's one-value gate {@code g}, computed as llama.cpp does,
     * {@code silu(g) / g} in float, then {@code out + ffn·s} (the product rounded first); Granite's
     * is added as it is.
     */
    private void shared(LlamaWeights.Experts w, float[] in, int n, float[] out) {
        int e = cfg.nEmbd();
        mats.swiglu(n, w.sharedGate, w.sharedUp, in, sharedGate, sharedUp, sharedHb, cfg.variant().gelu);
        mats.run(n, w.sharedDown, sharedHb, sharedOut);
        for (int r = 0; r < n; r++) {
            if (w.sharedGateInp == null) {
                for (int i = r * e; i < (r + 1) * e; i++) out[i] += sharedOut[i];
                continue;
            }
            float g = sharedScores[r];
            float s = g / (1f + (float) Math.exp(-g)) / g;
            for (int i = r * e; i < (r + 1) * e; i++) out[i] += sharedOut[i] * s;
        }
    }

    /** Bytes held: the fixed buffers, and the gather buffers as large as they have grown. */
    long bytes() {
        long floats = 0;
        for (float[] a : new float[][] {routerScores, routerProbs, routerSelection, expertWeights, choiceOut, sharedScores,
                sharedGate, sharedUp, sharedHb, sharedOut}) {
            floats += a == null ? 0 : a.length;
        }
        return 4 * floats + 4L * chosen.length + pass.bytesHeld();
    }

    /**
     * The chosen experts of one layer step, run together. Active expert {@code a} (the experts some
     * row chose, largest group first) has the rows that chose it gathered into buffers of its own; one
     * pass hands out chunks of every active expert's gate and up rows (SwiGLU follows per chunk),
     * the next chunks of their down rows: two pool dispatches per layer, not two per expert, and
     * workers claim chunks from one counter, so a small expert never leaves a worker idle. Buffers
     * grow to the largest group their slot has seen and are then kept (no allocation per token).
     */
    private final class ExpertPass implements WorkerPool.Job {
        private final int[] expertOf, rowsOf, filled;
        /** Per expert: rows that chose it this step, and its slot. */
        private final int[] groupSize, slotOf;
        /** For each (row, choice) of the step, in order: its active expert, and its row in that expert's group. */
        private final int[] choiceActive, choiceRow;
        private final float[][] in, gate, up, hb, out;
        private final AtomicInteger next = new AtomicInteger();
        private LlamaWeights.Experts w;
        private int active, choices, ff, chunkRows, perExpert, chunks;
        private boolean swigluPass;
        private long epoch;

        ExpertPass(int count, int maxActive, int maxChoices) {
            expertOf = new int[maxActive];
            rowsOf = new int[maxActive];
            filled = new int[maxActive];
            groupSize = new int[count];
            slotOf = new int[count];
            choiceActive = new int[maxChoices];
            choiceRow = new int[maxChoices];
            in = new float[maxActive][];
            gate = new float[maxActive][];
            up = new float[maxActive][];
            hb = new float[maxActive][];
            out = new float[maxActive][];
        }

        /** Bytes in the per-expert gather buffers: each slot's grows to the largest group it has held, then stays. */
        long bytesHeld() {
            long floats = 0;
            for (float[][] slots : new float[][][] {in, gate, up, hb, out}) {
                for (float[] a : slots) floats += a == null ? 0 : a.length;
            }
            return 4 * floats + 4L * (expertOf.length + rowsOf.length + filled.length + groupSize.length + slotOf.length
                    + choiceActive.length + choiceRow.length);
        }

        /**
         * Groups the step's {@code choices} (row, choice) pairs by expert, copying each pair's
         * input row into its expert's buffers; with {@code inputWeights} (Llama 4) each copy is the
         * row times its choice's weight, rounded per value as ggml multiplies. Active experts take
         * slots largest group first (the lower index first among equals): slot {@code a} then never
         * holds more than {@code choices / (a + 1)} rows, so the slots' buffers together stay within
         * about {@code maxRows · used · ln(count)} rows however the routing moves, and the pass
         * hands out the biggest experts' chunks first, which evens the workers' ends.
         */
        void gather(LlamaWeights.Experts w, float[] x, int choices, int used, int e, int ff, float[] inputWeights) {
            this.w = w;
            this.ff = ff;
            this.choices = choices;
            int count = w.gate.length;
            active = ExpertGroups.order(chosen, choices, count, groupSize, expertOf);
            for (int a = 0; a < active; a++) {
                int ex = expertOf[a], m = groupSize[ex];
                rowsOf[a] = m;
                slotOf[ex] = a;
                filled[a] = 0;
                in[a] = ExpertGroups.grow(in[a], m * e);
                out[a] = ExpertGroups.grow(out[a], m * e);
                gate[a] = ExpertGroups.grow(gate[a], m * ff);
                up[a] = ExpertGroups.grow(up[a], m * ff);
                hb[a] = ExpertGroups.grow(hb[a], m * ff);
            }
            for (int c = 0; c < choices; c++) {
                int a = slotOf[chosen[c]], m = filled[a]++;
                if (inputWeights == null) {
                    System.arraycopy(x, (c / used) * e, in[a], m * e, e);
                } else {
                    float wc = inputWeights[c];
                    for (int i = 0, s = (c / used) * e, d = m * e; i < e; i++) in[a][d + i] = x[s + i] * wc;
                }
                choiceActive[c] = a;
                choiceRow[c] = m;
            }
        }

        /** Each (row, choice)'s down output into {@code dst}, {@code e} floats per pair, in pair order. */
        void scatter(float[] dst, int e) {
            for (int c = 0; c < choices; c++) System.arraycopy(out[choiceActive[c]], choiceRow[c] * e, dst, c * e, e);
        }

        /** Sets up the SwiGLU pass (gate and up rows) or the down pass for the pool's next run. */
        void phase(boolean swiglu) {
            swigluPass = swiglu;
            WeightMatrix m = swiglu ? w.gate[0] : w.down[0];
            chunkRows = Matmuls.expertChunkRows(m);
            perExpert = (m.rows() + chunkRows - 1) / chunkRows;
            chunks = active * perExpert;
            next.set(0);
            epoch = mats.nextEpoch();
        }

        @Override
        public void run(int worker, int workers) {
            Scratch s = mats.scratch(worker);
            s.epoch = epoch;
            int rows = swigluPass ? ff : cfg.nEmbd();
            for (int c = next.getAndIncrement(); c < chunks; c = next.getAndIncrement()) {
                int a = c / perExpert, x = expertOf[a], m = rowsOf[a];
                int o0 = (c % perExpert) * chunkRows, o1 = Math.min(rows, o0 + chunkRows);
                if (swigluPass) {
                    mats.kernels().matmul(w.gate[x], in[a], m, gate[a], o0, o1, s);
                    mats.kernels().matmul(w.up[x], in[a], m, up[a], o0, o1, s);
                    if (w.gateBias != null) {
                        // gpt-oss: each expert's biases, then OpenAI's clamped SwiGLU.
                        Elementwise.addBiasRange(gate[a], m, ff, o0, o1, w.gateBias[x]);
                        Elementwise.addBiasRange(up[a], m, ff, o0, o1, w.upBias[x]);
                        Elementwise.swigluOai(gate[a], up[a], hb[a], m, ff, o0, o1);
                    } else {
                        Elementwise.swiglu(cfg.variant().gelu, gate[a], up[a], hb[a], m, ff, o0, o1);
                    }
                } else {
                    mats.kernels().matmul(w.down[x], hb[a], m, out[a], o0, o1, s);
                    if (w.downBias != null) Elementwise.addBiasRange(out[a], m, rows, o0, o1, w.downBias[x]);
                }
            }
        }
    }
}
