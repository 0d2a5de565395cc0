package dgr.engine;

import java.util.Arrays;
import java.util.stream.Collectors;

/**
 * How a llama stage stores each K or V value of its cache, named as llama.cpp's
 * {@code --cache-type-k} / {@code --cache-type-v} name them. Every type but {@code f32} is rounded
 * on store by a fixed rule that depends on the value (and, for {@code q8_0}, its block of 32) alone,
 * so a session's cache, and so its bits, never depend on its neighbours:
 * {@code f16} and {@code bf16} round to nearest, ties to even; {@code q8_0} keeps, per 32 values of
 * one position, the scale {@code d = max|x| / 127} rounded to f16 and {@code rint(x · (1/d))}.
 */
public enum KvCacheType {
    F32("f32", 4, 1),
    F16("f16", 2, 1),
    BF16("bf16", 2, 1),
    /** 32 signed bytes and one f16 scale per block of 32 values: 34 bytes. */
    Q8_0("q8_0", 34, 32);

    private final String flag;
    private final int blockBytes, blockValues;

    KvCacheType(String flag, int blockBytes, int blockValues) {
        this.flag = flag;
        this.blockBytes = blockBytes;
        this.blockValues = blockValues;
    }

    /** The name llama.cpp gives it ({@code f32}, {@code f16}, {@code bf16}, {@code q8_0}). */
    public String flag() { return flag; }

    /** Values per block of the type: 32 for {@code q8_0}, else 1. */
    public int blockValues() { return blockValues; }

    /** Bytes of {@code values} values (a multiple of {@link #blockValues}). */
    public long bytes(long values) {
        if (values % blockValues != 0) throw new IllegalArgumentException(flag + " stores blocks of " + blockValues + " values, not " + values);
        return values / blockValues * blockBytes;
    }

    /** Whether a row of {@code values} values splits into whole blocks. */
    public boolean fits(int values) { return values % blockValues == 0; }

    /** The names {@code --cache-type-k/-v} accept, for help and errors. */
    public static String names() {
        return Arrays.stream(values()).map(KvCacheType::flag).collect(Collectors.joining(", "));
    }

    /** The type {@code option} (a flag name, for the message) names by {@code value}, or a precise error. */
    public static KvCacheType ofFlag(String option, String value) {
        for (KvCacheType t : values()) if (t.flag.equals(value)) return t;
        String known = switch (value == null ? "" : value) {
            case "q4_0", "q4_1", "q5_0", "q5_1", "iq4_nl" -> " (llama.cpp's " + value + " is not implemented in dgr)";
            default -> "";
        };
        throw new IllegalArgumentException(option + " must be one of " + names() + ", not '" + value + "'" + known);
    }

    @Override
    public String toString() { return flag; }
}
