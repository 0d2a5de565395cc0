package dgr.runtime;

import dgr.engine.sampler.GreedySampler;
import dgr.engine.sampler.TokenSampler;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/** Greedy sampling that keeps a copy of every logits row it saw and every token it chose. */
final class Recorder implements TokenSampler {
    final List<float[]> logits = new ArrayList<>();
    final List<Integer> tokens = new ArrayList<>();

    @Override
    public int sample(float[] l, int offset, int width) {
        logits.add(Arrays.copyOfRange(l, offset, offset + width));
        int t = GreedySampler.INSTANCE.sample(l, offset, width);
        tokens.add(t);
        return t;
    }
}
