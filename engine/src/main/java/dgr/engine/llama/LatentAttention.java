package dgr.engine.llama;

import dgr.engine.kernel.Scratch;
import dgr.engine.kernel.WeightMatrix;
import dgr.engine.kernel.WorkerPool;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * DeepSeek-V2/V3's latent attention around the shared {@link Attention}, as llama.cpp's deepseek2
 * graph computes it, with its own buffers: the query before its up projection, the heads' full
 * queries, the latent and rotated key, the queries absorbed into the latent, each head's input to
 * a per-head projection, and the heads' values. The slot holds one K/V head of
 * {@code kvLoraRank + rope} values per position, which the attention reads as key and as value.
 */
final class LatentAttention {
    private final LlamaConfig cfg;
    private final LlamaConfig.Mla m;
    private final Matmuls mats;
    private final Norms norms;
    private final Rope rope;
    private final float[] qa, qFull, kv, absorbed, values;
    private final float[][] headIn;
    private final HeadJob headJob = new HeadJob();

    LatentAttention(LlamaConfig cfg, int maxRows, Matmuls mats, Norms norms, Rope rope) {
        this.cfg = cfg;
        this.m = cfg.mla();
        this.mats = mats;
        this.norms = norms;
        this.rope = rope;
        int r = maxRows, heads = cfg.nHead();
        qa = m.qLoraRank() == 0 ? null : new float[r * m.qLoraRank()];
        qFull = new float[r * heads * (m.nope() + m.rope())];
        kv = new float[r * m.stateDim()];
        absorbed = new float[r * heads * m.kvLoraRank()];
        values = new float[r * heads * m.vHead()];
        headIn = new float[heads][r * Math.max(m.nope(), m.kvLoraRank())];
    }

    /**
     * The queries into {@code q} and the state into {@code k} and the rows' slots at {@code l}:
     * the query (through its normed low-rank projection where the file has one), the latent
     * ({@code attn_kv_a_mqa}'s first {@code kvLoraRank} values, normed) and the rotated key (the
     * rest); each head's query becomes its unrotated part absorbed into the latent through its
     * {@code attn_k_b} rows, followed by its rotated part.
     */
    void queriesAndState(int l, LlamaWeights.Layer L, float[] in, BatchRows rows, float[] q, float[] k) {
        LlamaWeights.Mla w = L.mla();
        int n = rows.n;
        int heads = cfg.nHead(), qh = m.nope() + m.rope(), lr = m.kvLoraRank(), sd = m.stateDim(), qd = cfg.qDim();
        if (w.qa() != null) {
            mats.begin(n).add(w.qa(), in, qa).add(w.kvA(), in, kv).run();
            for (int r = 0; r < n; r++) norms.rms(qa, r * m.qLoraRank(), w.qaNorm(), qa, r * m.qLoraRank());
            mats.run(n, w.qb(), qa, qFull);
        } else {
            mats.begin(n).add(L.wq(), in, qFull).add(w.kvA(), in, kv).run();
        }
        for (int h = 0; h < heads; h++) {
            for (int r = 0; r < n; r++) System.arraycopy(qFull, (r * heads + h) * qh, headIn[h], r * m.nope(), m.nope());
        }
        perHead(n, w.kb(), lr, absorbed);
        for (int r = 0; r < n; r++) {
            int pos = rows.pos[r];
            for (int h = 0; h < heads; h++) {
                int qo = r * qd + h * sd;
                System.arraycopy(absorbed, (r * heads + h) * lr, q, qo, lr);
                System.arraycopy(qFull, (r * heads + h) * qh + m.nope(), q, qo + lr, m.rope());
                rope.apply(q, qo + lr, 1, m.rope(), pos);
            }
            norms.rms(kv, r * sd, w.kvANorm(), k, r * sd);
            System.arraycopy(kv, r * sd + lr, k, r * sd + lr, m.rope());
            rope.apply(k, r * sd + lr, 1, m.rope(), pos);
            float[] kp = rows.slot[r].kPageF32(l, pos);
            for (int i = 0, kb = KvSlot.kBlock(pos, sd) + pos % 8; i < sd; i++) kp[kb + 8 * i] = k[r * sd + i];
        }
    }

    /** Each head's latent output in {@code att} (the first kvLoraRank of its state-wide slice) lifted to its values, returned. */
    float[] values(int n, LlamaWeights.Mla w, float[] att) {
        int qd = cfg.qDim(), hd = cfg.headDim(), lr = m.kvLoraRank();
        for (int h = 0; h < cfg.nHead(); h++) {
            for (int r = 0; r < n; r++) System.arraycopy(att, r * qd + h * hd, headIn[h], r * lr, lr);
        }
        perHead(n, w.vb(), m.vHead(), values);
        return values;
    }

    long bytes() {
        long floats = 0;
        for (float[] a : new float[][] {qa, qFull, kv, absorbed, values}) floats += a == null ? 0 : a.length;
        for (float[] a : headIn) floats += a.length;
        return 4 * floats;
    }

    private void perHead(int n, WeightMatrix matrix, int rowsPerHead, float[] out) {
        headJob.set(n, matrix, rowsPerHead, out);
        mats.pool().run(headJob);
    }

    /**
     * One small matrix per attention head, each over its own input: head {@code h} multiplies
     * rows {@code [h·rowsPerHead, (h+1)·rowsPerHead)} of {@code m} with {@code headIn[h]}
     * ({@code n} rows), and the outputs land where a whole-matrix product would put them, so each
     * row's heads follow each other in {@code out}. Heads are claimed one at a time; every output
     * element is one kernel sequence, so which worker runs a head changes no bit.
     */
    private final class HeadJob implements WorkerPool.Job {
        private final AtomicInteger next = new AtomicInteger();
        private int n, rowsPerHead;
        private WeightMatrix matrix;
        private float[] out;
        private long epoch;

        void set(int n, WeightMatrix matrix, int rowsPerHead, float[] out) {
            this.n = n;
            this.matrix = matrix;
            this.rowsPerHead = rowsPerHead;
            this.out = out;
            epoch = mats.nextEpoch();
            next.set(0);
        }

        @Override
        public void run(int worker, int workers) {
            Scratch s = mats.scratch(worker);
            s.epoch = epoch;
            for (int h = next.getAndIncrement(); h < cfg.nHead(); h = next.getAndIncrement()) {
                mats.kernels().matmul(matrix, headIn[h], n, out, h * rowsPerHead, (h + 1) * rowsPerHead, s);
            }
        }
    }
}
