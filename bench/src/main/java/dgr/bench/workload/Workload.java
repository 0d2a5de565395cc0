package dgr.bench.workload;

import dgr.bench.IntRange;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Deterministic request generator: the same seed gives the same requests in the same order, so two
 * runs (or two targets) see the same work. Random prompts are token ids drawn uniformly from
 * {@code [firstId, vocabLimit)}, which avoids special tokens at the bottom of every vocabulary.
 */
public final class Workload {
    /** Ids below this are control/byte tokens in the vocabularies dgr reads; random prompts skip them. */
    static final int FIRST_ID = 3;

    private final IntRange promptTokens;
    private final IntRange maxTokens;
    private final List<PromptFile.Entry> file;
    private final int vocabLimit;
    private final SplittableRandom rnd;
    private int next;

    /**
     * @param file       prompts from a JSONL file (used round-robin), or empty for random prompts
     * @param vocabLimit exclusive upper bound of random ids
     */
    public Workload(IntRange promptTokens, IntRange maxTokens, List<PromptFile.Entry> file, int vocabLimit, long seed) {
        if (file.isEmpty() && vocabLimit <= FIRST_ID) throw new IllegalArgumentException("vocabulary too small: " + vocabLimit);
        this.promptTokens = promptTokens;
        this.maxTokens = maxTokens;
        this.file = List.copyOf(file);
        this.vocabLimit = vocabLimit;
        this.rnd = new SplittableRandom(seed);
    }

    /** The next request (thread-safe; the order of calls fixes which client gets which request). */
    public synchronized RequestSpec next() {
        if (!file.isEmpty()) {
            PromptFile.Entry e = file.get(next++ % file.size());
            int max = e.maxTokens() > 0 ? e.maxTokens() : maxTokens.draw(rnd);
            return e.ids() != null ? new RequestSpec(e.ids(), null, max, false) : new RequestSpec(null, e.text(), max, false);
        }
        next++;
        return new RequestSpec(randomIds(promptTokens.draw(rnd)), null, maxTokens.draw(rnd), false);
    }

    /** A probe: a few prompt tokens and a few generated ones, to see how long the load holds it back. */
    public synchronized RequestSpec probe(int promptLen, int genTokens) {
        return new RequestSpec(randomIds(promptLen), null, genTokens, true);
    }

    private int[] randomIds(int n) {
        int[] ids = new int[n];
        for (int i = 0; i < n; i++) ids[i] = rnd.nextInt(FIRST_ID, vocabLimit);
        return ids;
    }
}
