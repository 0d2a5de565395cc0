package dgr.bench.target;

import dgr.engine.StateLayout;

/**
 * State bytes per token as saturation.json reports them, and how they were obtained.
 *
 * <p>A llama KV cache is linear in tokens: {@code bytesForTokens(n) = n × c}, and {@code c} is exact
 * for every length. A deepseek4 state is not: its sliding window stops growing at {@code n_swa},
 * compressed entries appear once per 4 (CSA) or 128 (HCA) tokens, and the compressor rings are held
 * from the first token. For such a layout the value is {@code ⌈bytesForTokens(L) / L⌉} at the
 * benchmark's mean session length {@code L} (what one of its sessions reserves, per token), so
 * {@code budget ÷ (value × L)} is the number of such sessions that fit; it does not extrapolate to
 * other lengths, and the basis says so.
 */
public record StatePerToken(long bytesPerToken, String basis) {
    public static StatePerToken of(StateLayout layout, int sessionTokens) {
        long one = layout.bytesForTokens(1);
        boolean linear = layout.bytesForTokens(0) == 0
                && layout.bytesForTokens(sessionTokens) == one * sessionTokens
                && layout.bytesForTokens(2 * sessionTokens) == 2 * one * sessionTokens;
        if (linear) return new StatePerToken(one, "linear: exact for every session length (" + layout.id() + ")");
        long at = layout.bytesForTokens(sessionTokens);
        return new StatePerToken((at + sessionTokens - 1) / sessionTokens,
                "not linear in tokens: bytes a " + sessionTokens + "-token session reserves (" + at + " B) ÷ "
                        + sessionTokens + ", the workload's mean prompt + max tokens; valid at that length only ("
                        + layout.id() + ")");
    }
}
