package dgr.runtime;

import java.util.Arrays;
import java.util.List;

/**
 * When a session stops generating.
 *
 * @param maxTokens     most generated tokens (finish reason {@code length})
 * @param endTokenIds   end-of-generation ids (EOS/EOT; finish reason {@code stop}); the id is
 *                      counted as generated but contributes no text
 * @param stopStrings   texts that end generation (finish reason {@code stop}); the stop string and
 *                      what follows it are not streamed. Needs a {@link TextDecoder}
 */
public record StopConditions(int maxTokens, int[] endTokenIds, List<String> stopStrings) {
    public StopConditions {
        if (maxTokens < 1) throw new IllegalArgumentException("maxTokens must be >= 1, got " + maxTokens);
        endTokenIds = endTokenIds.clone();
        stopStrings = List.copyOf(stopStrings);
        for (String s : stopStrings) {
            if (s.isEmpty()) throw new IllegalArgumentException("stop strings must not be empty");
        }
    }

    public static StopConditions maxTokens(int maxTokens) {
        return new StopConditions(maxTokens, new int[0], List.of());
    }

    public StopConditions withEndTokens(int... ids) {
        return new StopConditions(maxTokens, ids, stopStrings);
    }

    public StopConditions withStopStrings(String... strings) {
        return new StopConditions(maxTokens, endTokenIds, List.of(strings));
    }

    public boolean isEndToken(int id) {
        for (int e : endTokenIds) if (e == id) return true;
        return false;
    }

    @Override
    public int[] endTokenIds() { return endTokenIds.clone(); }

    @Override
    public boolean equals(Object o) {
        return o instanceof StopConditions s && s.maxTokens == maxTokens && Arrays.equals(s.endTokenIds, endTokenIds)
                && s.stopStrings.equals(stopStrings);
    }

    @Override
    public int hashCode() { return 31 * (31 * maxTokens + Arrays.hashCode(endTokenIds)) + stopStrings.hashCode(); }

    @Override
    public String toString() {
        return "StopConditions[maxTokens=" + maxTokens + ", endTokenIds=" + Arrays.toString(endTokenIds)
                + ", stopStrings=" + stopStrings + "]";
    }
}
