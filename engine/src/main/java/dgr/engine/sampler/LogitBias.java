package dgr.engine.sampler;

import java.util.Arrays;
import java.util.Map;
import java.util.TreeMap;

/**
 * Values added to chosen tokens' logits before anything else (OpenAI's and llama.cpp's
 * {@code logit_bias}); {@code -Infinity} bans a token. Kept sorted by token id, so two equal biases
 * apply in the same order and a session's bits do not depend on how the request listed them.
 */
public record LogitBias(int[] tokens, float[] values) {
    private static final LogitBias NONE = new LogitBias(new int[0], new float[0]);

    public LogitBias {
        if (tokens.length != values.length) throw new IllegalArgumentException("one value per token");
        for (int i = 0; i < tokens.length; i++) {
            if (tokens[i] < 0) throw new IllegalArgumentException("logit bias token must be >= 0: " + tokens[i]);
            if (i > 0 && tokens[i] <= tokens[i - 1]) throw new IllegalArgumentException("logit bias tokens must be ascending and distinct");
            if (Float.isNaN(values[i]) || values[i] == Float.POSITIVE_INFINITY) {
                throw new IllegalArgumentException("logit bias of token " + tokens[i] + " must be finite or -Infinity: " + values[i]);
            }
        }
        tokens = tokens.clone();
        values = values.clone();
    }

    public static LogitBias none() { return NONE; }

    /** From token → value pairs in any order. */
    public static LogitBias of(Map<Integer, Float> biases) {
        TreeMap<Integer, Float> sorted = new TreeMap<>(biases);
        int[] t = new int[sorted.size()];
        float[] v = new float[sorted.size()];
        int i = 0;
        for (var e : sorted.entrySet()) {
            t[i] = e.getKey();
            v[i++] = e.getValue();
        }
        return new LogitBias(t, v);
    }

    public boolean isEmpty() { return tokens.length == 0; }

    /** The largest token id named, or -1: the caller checks it against the vocabulary. */
    public int maxToken() { return tokens.length == 0 ? -1 : tokens[tokens.length - 1]; }

    void applyTo(float[] logits) {
        for (int i = 0; i < tokens.length; i++) logits[tokens[i]] += values[i];
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof LogitBias b && Arrays.equals(tokens, b.tokens) && Arrays.equals(values, b.values);
    }

    @Override
    public int hashCode() { return 31 * Arrays.hashCode(tokens) + Arrays.hashCode(values); }

    @Override
    public String toString() { return "LogitBias" + Arrays.toString(tokens) + "=" + Arrays.toString(values); }
}
