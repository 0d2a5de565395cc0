package dgr.bench;

import java.util.SplittableRandom;

/** A workload size given as {@code N} (fixed) or {@code A:B} (uniform over [A, B], both inclusive). */
public record IntRange(int min, int max) {
    public IntRange {
        if (min < 1 || max < min) throw new IllegalArgumentException("need 1 <= min <= max, got " + min + ":" + max);
    }

    public static IntRange fixed(int n) { return new IntRange(n, n); }

    public static IntRange parse(String s) {
        String t = s.strip();
        try {
            int colon = t.indexOf(':');
            if (colon < 0) return fixed(Integer.parseInt(t));
            return new IntRange(Integer.parseInt(t.substring(0, colon)), Integer.parseInt(t.substring(colon + 1)));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("expected N or A:B, got '" + s + "'");
        }
    }

    public int draw(SplittableRandom rnd) { return min == max ? min : rnd.nextInt(min, max + 1); }

    public double mean() { return (min + max) / 2.0; }

    @Override
    public String toString() { return min == max ? Integer.toString(min) : min + ":" + max; }
}
