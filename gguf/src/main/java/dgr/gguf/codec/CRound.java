package dgr.gguf.codec;

/**
 * The C conversions llama.cpp's reference quantizers rely on, spelled out so Java produces the
 * same integers. Java's own casts and Math.round differ from C at halves and out of range.
 */
final class CRound {
    private CRound() {}

    /** C's roundf: halves round away from zero (Math.round rounds -2.5 to -2, roundf to -3). */
    static int roundf(float x) {
        int r = Math.round(Math.abs(x));
        return x < 0 ? -r : r;
    }

    /**
     * ggml's nearest_int: adding 1.5·2^23 leaves round-to-nearest-even of {@code x} in the low
     * mantissa bits. Only meaningful for |x| ≤ 2^22, which every caller guarantees.
     */
    static int nearestInt(float x) {
        float v = x + 12582912.f;
        return (Float.floatToRawIntBits(v) & 0x007fffff) - 0x00400000;
    }

    /**
     * C's {@code (int8_t) f} as x86-64 compilers emit it: truncate toward zero to int32 (cvttss2si,
     * which gives INT_MIN for NaN and out-of-range values), then keep the low byte.
     */
    static int truncToInt8(float f) {
        int i = Float.isNaN(f) || f >= 0x1p31f || f < -0x1p31f ? Integer.MIN_VALUE : (int) f;
        return (byte) i;
    }

    /** C's {@code (uint8_t) f} on x86-64, same rule as {@link #truncToInt8}, unsigned low byte. */
    static int truncToUint8(float f) {
        return truncToInt8(f) & 0xff;
    }
}
