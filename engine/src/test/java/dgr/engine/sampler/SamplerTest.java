package dgr.engine.sampler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.offset;

import java.lang.management.ManagementFactory;
import java.util.Arrays;
import java.util.Comparator;
import java.util.SplittableRandom;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class SamplerTest {
    private static final int DRAWS = 20_000;

    /** Logits whose softmax (at temperature 1) is exactly these probabilities. */
    private static float[] logitsOf(double... probs) {
        float[] l = new float[probs.length];
        for (int i = 0; i < probs.length; i++) l[i] = (float) Math.log(probs[i]);
        return l;
    }

    private static float[] randomLogits(int n, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        float[] l = new float[n];
        for (int i = 0; i < n; i++) l[i] = (float) (r.nextGaussian() * 3);
        return l;
    }

    private static SamplerConfig config(float temperature, int topK, float topP, float minP, long seed) {
        return new SamplerConfig(temperature, topK, topP, minP, 1f, 0f, 0f, 0, seed);
    }

    private static int[] histogram(Sampler s, float[] logits, int draws) {
        int[] h = new int[logits.length];
        for (int i = 0; i < draws; i++) h[s.sample(logits)]++;
        return h;
    }

    @Test
    void greedyTakesTheArgmaxAndTheLowestIdOnTies() {
        Sampler s = new Sampler(SamplerConfig.greedy(), 6);
        assertThat(s.sample(new float[] {0.1f, 2f, -1f, 1.9f, 0f, 0f})).isEqualTo(1);
        assertThat(s.sample(new float[] {0f, 3f, 1f, 3f, 3f, -2f})).isEqualTo(1);
        float[] big = randomLogits(50_000, 7);
        int expected = IntStream.range(0, big.length).reduce((a, b) -> big[b] > big[a] ? b : a).getAsInt();
        assertThat(new Sampler(SamplerConfig.greedy(), big.length).sample(big)).isEqualTo(expected);
    }

    @Test
    void theSameSeedRepeatsTheSequenceAndAnotherSeedDoesNot() {
        float[] logits = randomLogits(2_000, 3);
        SamplerConfig cfg = config(1.0f, 0, 1f, 0f, 42);
        Sampler s1 = new Sampler(cfg, logits.length), s2 = new Sampler(cfg, logits.length);
        Sampler s3 = new Sampler(cfg.withSeed(43), logits.length);
        int[] a = new int[200], b = new int[200], c = new int[200];
        for (int i = 0; i < 200; i++) {
            a[i] = s1.sample(logits);
            b[i] = s2.sample(logits);
            c[i] = s3.sample(logits);
        }
        assertThat(b).isEqualTo(a);
        assertThat(c).isNotEqualTo(a);
        assertThat(Arrays.stream(a).distinct().count()).isGreaterThan(50); // it really is random
    }

    @Test
    void topKOfOneIsGreedy() {
        float[] logits = randomLogits(10_000, 11);
        int greedy = new Sampler(SamplerConfig.greedy(), logits.length).sample(logits);
        Sampler s = new Sampler(config(1.5f, 1, 1f, 0f, 5), logits.length);
        for (int i = 0; i < 100; i++) assertThat(s.sample(logits)).isEqualTo(greedy);
    }

    @Test
    void topKKeepsExactlyTheKMostLikelyTokens() {
        float[] logits = randomLogits(5_000, 13);
        Integer[] order = IntStream.range(0, logits.length).boxed().toArray(Integer[]::new);
        Arrays.sort(order, Comparator.comparingDouble((Integer i) -> -logits[i]).thenComparingInt(i -> i));
        int[] top = Arrays.stream(order, 0, 40).mapToInt(Integer::intValue).sorted().toArray();
        assertThat(new Sampler(config(1f, 40, 1f, 0f, 1), logits.length).candidatesFor(logits)).containsExactly(top);
    }

    @Test
    void topPKeepsTheSmallestSetReachingPAndDrawsInProportion() {
        float[] logits = logitsOf(0.5, 0.3, 0.15, 0.05);
        Sampler s = new Sampler(config(1f, 0, 0.75f, 0f, 99), logits.length);
        assertThat(s.candidatesFor(logits)).containsExactly(0, 1); // 0.5 < 0.75 <= 0.5 + 0.3
        int[] h = histogram(s, logits, DRAWS);
        assertThat(h[2] + h[3]).isZero();
        assertThat(h[0] / (double) DRAWS).isCloseTo(0.625, offset(0.02));
    }

    @Test
    void topPWithoutTopKFindsTheSameNucleusAsAFullSort() {
        float[] logits = randomLogits(32_000, 17);
        Integer[] order = IntStream.range(0, logits.length).boxed().toArray(Integer[]::new);
        Arrays.sort(order, Comparator.comparingDouble((Integer i) -> -logits[i]).thenComparingInt(i -> i));
        double max = logits[order[0]], z = 0;
        for (float l : logits) z += Math.exp(l - max);
        double cum = 0;
        int keep = 0;
        while (cum < 0.9) cum += Math.exp(logits[order[keep++]] - max) / z;
        int[] nucleus = Arrays.stream(order, 0, keep).mapToInt(Integer::intValue).sorted().toArray();
        assertThat(keep).isGreaterThan(64); // needs more than the first slice
        assertThat(new Sampler(config(1f, 0, 0.9f, 0f, 1), logits.length).candidatesFor(logits)).containsExactly(nucleus);
    }

    @Test
    void minPDropsTokensLessLikelyThanPTimesTheBest() {
        float[] logits = logitsOf(0.5, 0.3, 0.15, 0.05);
        Sampler s = new Sampler(config(1f, 0, 1f, 0.2f, 7), logits.length); // threshold 0.1
        assertThat(s.candidatesFor(logits)).containsExactly(0, 1, 2);
        int[] h = histogram(s, logits, DRAWS);
        assertThat(h[3]).isZero();
        assertThat(h[0]).isPositive();
        assertThat(h[1]).isPositive();
        assertThat(h[2]).isPositive();
        // After top-k the same rule applies to the sorted survivors.
        assertThat(new Sampler(config(1f, 3, 1f, 0.4f, 7), 4).candidatesFor(logits)).containsExactly(0, 1);
    }

    @Test
    void temperatureSharpensTheDistribution() {
        float[] logits = logitsOf(0.6, 0.4);
        int[] cold = histogram(new Sampler(config(0.25f, 0, 1f, 0f, 3), 2), logits, DRAWS);
        // (0.6^4) / (0.6^4 + 0.4^4) = 0.835
        assertThat(cold[0] / (double) DRAWS).isCloseTo(0.835, offset(0.02));
    }

    @Test
    void penaltiesFollowLlamaCpp() {
        SamplerConfig cfg = new SamplerConfig(1f, 0, 1f, 0f, 2f, 0.25f, 0.5f, 3, 0);
        Sampler s = new Sampler(cfg, 5);
        for (int t : new int[] {4, 0, 1, 1}) s.accept(t); // window of 3 keeps 0, 1, 1; token 4 fell out
        float[] logits = {3f, -1f, 0f, 7f, 5f};
        s.penalize(logits);
        assertThat(logits[0]).isEqualTo(3f / 2 - 1 * 0.5f - 0.25f);  // positive: divided
        assertThat(logits[1]).isEqualTo(-1f * 2 - 2 * 0.5f - 0.25f); // negative: multiplied, counted twice
        assertThat(logits[2]).isEqualTo(0f);                          // never seen
        assertThat(logits[3]).isEqualTo(7f);
        assertThat(logits[4]).isEqualTo(5f);                          // outside the window
    }

    @Test
    void sampledTokensCountAsRecentForPenalties() {
        SamplerConfig cfg = new SamplerConfig(0f, 0, 1f, 0f, 1f, 10f, 0f, 4, 0);
        Sampler s = new Sampler(cfg, 3);
        float[] logits = {1f, 0.5f, 0f};
        assertThat(s.sample(logits)).isEqualTo(0);
        assertThat(s.sample(logits)).isEqualTo(1); // 0 now carries the presence penalty
        assertThat(s.sample(logits)).isEqualTo(2);
    }

    @Test
    void steadyStateSamplingWithTopKAllocatesNothing() {
        float[] logits = randomLogits(32_000, 23);
        Sampler s = new Sampler(new SamplerConfig(0.8f, 40, 0.95f, 0.05f, 1.1f, 0.1f, 0.1f, 64, 1), logits.length);
        for (int i = 0; i < 2_000; i++) s.sample(logits); // warm up: JIT, penalties window full
        var threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long tid = Thread.currentThread().threadId();
        // The least of several rounds: on a loaded machine the JIT may not have compiled the loop yet in
        // the first (once 376 bytes under load 30); code that allocates per draw does so in every round.
        long least = Long.MAX_VALUE;
        for (int round = 0; round < 20 && least > 0; round++) {
            long before = threads.getThreadAllocatedBytes(tid);
            for (int i = 0; i < 500; i++) s.sample(logits);
            least = Math.min(least, threads.getThreadAllocatedBytes(tid) - before);
        }
        assertThat(least).isZero();
    }

    @Test
    void aSamplerResumedAtStepKContinuesWithTheDrawsOfTheUninterruptedRun() {
        float[] logits = randomLogits(500, 11);
        SamplerConfig cfg = new SamplerConfig(0.9f, 40, 0.95f, 0.02f, 1.1f, 0.1f, 0.1f, 64, 1234);
        Sampler whole = new Sampler(cfg, logits.length);
        int[] tokens = new int[120];
        for (int i = 0; i < tokens.length; i++) tokens[i] = whole.sample(logits);
        for (int k : new int[] {1, 37, 119}) {
            Sampler resumed = new Sampler(cfg, logits.length);
            for (int i = 0; i < k; i++) resumed.accept(tokens[i]);
            resumed.skipTo(k);
            for (int i = k; i < tokens.length; i++) assertThat(resumed.sample(logits)).as("draw %d after resuming at %d", i, k).isEqualTo(tokens[i]);
            assertThat(resumed.step()).isEqualTo(tokens.length);
        }
    }

    @Test
    void badArgumentsAreRejected() {
        assertThatThrownBy(() -> new SamplerConfig(1f, -1, 1f, 0f, 1f, 0f, 0f, 0, 0)).hasMessageContaining("topK");
        assertThatThrownBy(() -> new SamplerConfig(1f, 0, 0f, 0f, 1f, 0f, 0f, 0, 0)).hasMessageContaining("topP");
        assertThatThrownBy(() -> new SamplerConfig(1f, 0, 1f, 2f, 1f, 0f, 0f, 0, 0)).hasMessageContaining("minP");
        assertThatThrownBy(() -> new SamplerConfig(1f, 0, 1f, 0f, 0f, 0f, 0f, 0, 0)).hasMessageContaining("repeatPenalty");
        Sampler s = new Sampler(SamplerConfig.greedy(), 4);
        assertThatThrownBy(() -> s.sample(new float[3])).hasMessageContaining("expected 4 logits");
        assertThatThrownBy(() -> s.accept(4)).hasMessageContaining("outside");
    }
}
