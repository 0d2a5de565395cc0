package dgr.engine.sampler;

import java.util.Arrays;

/**
 * Picks the next token of one session from its logits, in llama.cpp's default order:
 * logit bias → penalties → top-k → top-p → min-p → temperature → draw. Owns the session's draw counter and its
 * recent tokens, so a session's tokens do not depend on its neighbours in a batch.
 *
 * <p>The k-th draw is a pure function of the seed and k ({@link #uniform}): a session resumed on
 * another stage or node at step k ({@link #skipTo}, after {@link #accept}ing the tokens it already
 * produced) continues with exactly the draws it would have made, whatever ran before.
 *
 * <p>All buffers are sized to the vocabulary once, so {@link #sample} allocates nothing.
 * Candidates are never fully sorted: top-k uses a bounded heap, top-p without top-k selects a
 * growing top slice until it holds the nucleus, and min-p alone is a single filtering pass.
 * Ties are broken by lower token id, so results never depend on sort stability.
 * Not thread-safe: one per session.
 *
 * <p>It reads the engine's output row in place ({@link TokenSampler}); the row is copied once into its
 * own buffer only when something changes logits before the choice (bias, penalties) or the filters
 * need room to work (any non-greedy draw). A greedy choice with neither reads the row and copies nothing.
 */
public final class Sampler implements TokenSampler {
    /** First slice size tried when top-p must find its nucleus without top-k. */
    private static final int FIRST_SLICE = 64;

    private final SamplerConfig config;
    private final LogitBias bias;
    private final int vocabSize;
    private long step;

    private final int[] history;
    private int historyStart;
    private int historyCount;
    private final int[] counts;
    private final int[] penalizedAt;
    private int penaltyRound;

    private final float[] work;
    private final int[] candidates;
    private final double[] weights;

    public Sampler(SamplerConfig config, int vocabSize) {
        this(config, LogitBias.none(), vocabSize);
    }

    public Sampler(SamplerConfig config, LogitBias bias, int vocabSize) {
        if (vocabSize <= 0) throw new IllegalArgumentException("vocabSize must be > 0: " + vocabSize);
        if (bias.maxToken() >= vocabSize) {
            throw new IllegalArgumentException("logit bias names token " + bias.maxToken() + ", outside the vocabulary of " + vocabSize);
        }
        this.config = config;
        this.bias = bias;
        this.vocabSize = vocabSize;
        this.history = new int[Math.max(1, config.penaltyLastN())];
        this.counts = new int[vocabSize];
        this.penalizedAt = new int[vocabSize];
        this.work = new float[vocabSize];
        this.candidates = new int[vocabSize];
        this.weights = new double[vocabSize];
    }

    /** A fresh sampler travels as its settings and its bias; one with draws already made does not. */
    @Override
    public SamplerConfig portableConfig() { return step == 0 ? config : null; }

    @Override
    public LogitBias portableBias() { return bias; }

    public SamplerConfig config() { return config; }

    /**
     * The next token for these logits (not modified). The token is also recorded as recent,
     * as {@link #accept} does.
     */
    public int sample(float[] logits) {
        return sample(logits, 0, logits.length);
    }

    /**
     * Same as {@link #sample(float[])} for the {@code width} logits at {@code logits[offset..]}, so a
     * row of an engine's output buffer is sampled in place (this is the runtime's TokenSampler shape).
     */
    @Override
    public int sample(float[] logits, int offset, int width) {
        if (width != vocabSize) {
            throw new IllegalArgumentException("expected " + vocabSize + " logits, got " + width);
        }
        int token;
        if (config.isGreedy() && bias.isEmpty() && !penalizesNow()) {
            token = GreedySampler.argmax(logits, offset, width);
        } else {
            System.arraycopy(logits, offset, work, 0, vocabSize);
            bias.applyTo(work);
            penalize(work);
            token = config.isGreedy() ? GreedySampler.argmax(work, 0, vocabSize) : draw(filter());
        }
        step++;
        accept(token);
        return token;
    }

    /** Draws made so far (one per {@link #sample}): the index of the next draw. */
    public long step() { return step; }

    /**
     * Continues at draw {@code k}: for a session resumed elsewhere, after its earlier tokens were
     * given to {@link #accept} (so the penalties see them), the next {@link #sample} uses draw k.
     */
    public void skipTo(long k) {
        if (k < 0) throw new IllegalArgumentException("draw index must be >= 0: " + k);
        step = k;
    }

    /**
     * The k-th uniform draw in [0, 1) of a session seeded with {@code seed}: SplitMix64's finaliser
     * of {@code seed + (k + 1) · γ}, the same mixing SplittableRandom uses, but indexed, not chained.
     */
    static double uniform(long seed, long k) {
        long z = seed + (k + 1) * 0x9e3779b97f4a7c15L;
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        z = z ^ (z >>> 31);
        return (z >>> 11) * 0x1.0p-53;
    }

    /** Records a token the penalties should see: prompt tokens, and tokens chosen elsewhere. */
    public void accept(int token) {
        if (token < 0 || token >= vocabSize) throw new IllegalArgumentException("token " + token + " outside vocabulary");
        int lastN = config.penaltyLastN();
        if (lastN == 0) return;
        if (historyCount == lastN) {
            counts[history[historyStart]]--;
            history[historyStart] = token;
            historyStart = (historyStart + 1) % lastN;
        } else {
            history[(historyStart + historyCount) % lastN] = token;
            historyCount++;
        }
        counts[token]++;
    }

    private boolean penalizesNow() {
        return config.penalizes() && historyCount > 0;
    }

    /** llama.cpp's penalties on the last {@code penaltyLastN} accepted tokens, each distinct token once. */
    void penalize(float[] logits) {
        if (!penalizesNow()) return;
        int round = ++penaltyRound;
        int lastN = config.penaltyLastN();
        for (int k = 0; k < historyCount; k++) {
            int t = history[(historyStart + k) % lastN];
            if (penalizedAt[t] == round) continue;
            penalizedAt[t] = round;
            int c = counts[t];
            float l = logits[t];
            // Dividing a negative logit would make the token more likely, hence the multiply.
            l = l <= 0 ? l * config.repeatPenalty() : l / config.repeatPenalty();
            logits[t] = l - c * config.frequencyPenalty() - config.presencePenalty();
        }
    }

    /** Applies top-k, top-p and min-p to {@link #work}; survivors are {@code candidates[0, n)}; returns n. */
    int filter() {
        int n;
        boolean sorted;
        if (config.topK() > 0 && config.topK() < vocabSize) {
            n = selectTop(config.topK());
            sorted = true;
        } else {
            n = vocabSize;
            for (int i = 0; i < n; i++) candidates[i] = i;
            sorted = false;
        }
        if (config.topP() < 1f) {
            if (!sorted) {
                n = nucleusWithoutSorting(n);
            } else {
                n = nucleusOfSorted(n);
            }
            sorted = true;
        }
        if (config.minP() > 0f) {
            n = sorted ? minPOfSorted(n) : minPUnsorted(n);
        }
        return n;
    }

    private int nucleusOfSorted(int n) {
        float max = work[candidates[0]];
        double z = 0;
        for (int i = 0; i < n; i++) z += Math.exp(work[candidates[i]] - max);
        double cum = 0;
        for (int i = 0; i < n; i++) {
            cum += Math.exp(work[candidates[i]] - max) / z;
            if (cum >= config.topP()) return i + 1;
        }
        return n;
    }

    /** Top-p over the whole vocabulary: widen a sorted top slice until its mass reaches p. */
    private int nucleusWithoutSorting(int n) {
        float max = Float.NEGATIVE_INFINITY;
        for (int i = 0; i < n; i++) max = Math.max(max, work[i]);
        double z = 0;
        for (int i = 0; i < n; i++) z += Math.exp(work[i] - max);
        for (int k = Math.min(n, FIRST_SLICE); ; k = Math.min(n, k * 4)) {
            int m = selectTop(k);
            double cum = 0;
            for (int i = 0; i < m; i++) {
                cum += Math.exp(work[candidates[i]] - max) / z;
                if (cum >= config.topP()) return i + 1;
            }
            if (k == n) return m; // rounding kept the sum just under p: keep everything
        }
    }

    private int minPOfSorted(int n) {
        double threshold = work[candidates[0]] + Math.log(config.minP());
        int i = 1; // the most likely token always stays
        while (i < n && work[candidates[i]] >= threshold) i++;
        return i;
    }

    private int minPUnsorted(int n) {
        float max = Float.NEGATIVE_INFINITY;
        for (int i = 0; i < n; i++) max = Math.max(max, work[candidates[i]]);
        double threshold = max + Math.log(config.minP());
        int kept = 0;
        for (int i = 0; i < n; i++) {
            int t = candidates[i];
            if (work[t] >= threshold) candidates[kept++] = t;
        }
        return kept;
    }

    /** Softmax of the candidates at the configured temperature, then one draw. */
    private int draw(int n) {
        float max = Float.NEGATIVE_INFINITY;
        for (int i = 0; i < n; i++) max = Math.max(max, work[candidates[i]]);
        double invT = 1.0 / config.temperature();
        double sum = 0;
        for (int i = 0; i < n; i++) {
            double w = Math.exp((work[candidates[i]] - max) * invT);
            weights[i] = w;
            sum += w;
        }
        double u = uniform(config.seed(), step) * sum;
        for (int i = 0; i < n; i++) {
            u -= weights[i];
            if (u < 0) return candidates[i];
        }
        return candidates[n - 1]; // u landed on the rounding edge of the last weight
    }

    /**
     * The k best tokens of {@link #work} (higher logit first, lower id on ties) into
     * {@code candidates[0, k)}, via a size-k min-heap of the best seen so far: O(V log k).
     */
    private int selectTop(int k) {
        int[] heap = candidates; // the heap occupies [0, k) and is sorted in place at the end
        int size = 0;
        for (int t = 0; t < vocabSize; t++) {
            if (size < k) {
                int i = size++;
                while (i > 0) { // sift up: the root is the worst kept token
                    int parent = (i - 1) >>> 1;
                    if (!better(heap[parent], t)) break;
                    heap[i] = heap[parent];
                    i = parent;
                }
                heap[i] = t;
            } else if (better(t, heap[0])) {
                siftDown(heap, t, size);
            }
        }
        for (int end = size - 1; end > 0; end--) { // heap sort: move the worst to the back
            int worst = heap[0];
            siftDown(heap, heap[end], end);
            heap[end] = worst;
        }
        return size;
    }

    private void siftDown(int[] heap, int t, int size) {
        int i = 0;
        int half = size >>> 1;
        while (i < half) {
            int child = 2 * i + 1;
            if (child + 1 < size && better(heap[child], heap[child + 1])) child++;
            if (!better(t, heap[child])) break;
            heap[i] = heap[child];
            i = child;
        }
        heap[i] = t;
    }

    private boolean better(int a, int b) {
        float la = work[a], lb = work[b];
        return la > lb || (la == lb && a < b);
    }

    /** The surviving candidates for these logits, ascending; for tests of the filter chain. */
    int[] candidatesFor(float[] logits) {
        System.arraycopy(logits, 0, work, 0, vocabSize);
        bias.applyTo(work);
        penalize(work);
        int n = filter();
        int[] out = Arrays.copyOf(candidates, n);
        Arrays.sort(out);
        return out;
    }
}
