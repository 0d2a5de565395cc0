package dgr.runtime;

import java.util.List;

/**
 * Finds stop strings in a session's generated text while streaming it. Text that could still turn
 * out to be the start of a stop string is held back until the next piece decides, so a client never
 * receives part of a stop string.
 */
public final class StopMatcher {
    private final List<String> stops;
    private final StringBuilder pending = new StringBuilder();
    private boolean stopped;

    public StopMatcher(List<String> stops) { this.stops = stops; }

    /** Appends a piece; returns the text that is safe to emit now. Check {@link #stopped()} after. */
    public String push(String piece) {
        if (stops.isEmpty()) return piece;
        pending.append(piece);
        int cut = -1;
        for (String s : stops) {
            int i = pending.indexOf(s);
            if (i >= 0 && (cut < 0 || i < cut)) cut = i;
        }
        if (cut >= 0) {
            stopped = true;
            String out = pending.substring(0, cut);
            pending.setLength(0);
            return out;
        }
        int hold = longestSuffixThatPrefixesAStop();
        String out = pending.substring(0, pending.length() - hold);
        pending.delete(0, pending.length() - hold);
        return out;
    }

    /** Releases held-back text when generation ends for another reason. */
    public String flush() {
        String out = pending.toString();
        pending.setLength(0);
        return out;
    }

    public boolean stopped() { return stopped; }

    private int longestSuffixThatPrefixesAStop() {
        int best = 0;
        int n = pending.length();
        for (String s : stops) {
            for (int len = Math.min(s.length() - 1, n); len > best; len--) {
                if (endsWithPrefix(n, s, len)) {
                    best = len;
                    break;
                }
            }
        }
        return best;
    }

    private boolean endsWithPrefix(int n, String stop, int len) {
        for (int i = 0; i < len; i++) {
            if (pending.charAt(n - len + i) != stop.charAt(i)) return false;
        }
        return true;
    }
}
