package dgr.gguf;

/**
 * ggml tensor element types dgr knows, with llama.cpp's type ids and block geometry.
 * A block holds {@code blockValues} values in {@code blockBytes} bytes.
 */
public enum GgmlType {
    F32(0, 1, 4),
    F16(1, 1, 2),
    Q4_0(2, 32, 18),
    Q4_1(3, 32, 20),
    Q5_0(6, 32, 22),
    Q5_1(7, 32, 24),
    Q8_0(8, 32, 34),
    Q8_1(9, 32, 36),
    Q2_K(10, 256, 84),
    Q3_K(11, 256, 110),
    Q4_K(12, 256, 144),
    Q5_K(13, 256, 176),
    Q6_K(14, 256, 210),
    Q8_K(15, 256, 292),
    IQ2_XXS(16, 256, 66),
    IQ2_XS(17, 256, 74),
    IQ3_XXS(18, 256, 98),
    IQ1_S(19, 256, 50),
    IQ4_NL(20, 32, 18),
    IQ3_S(21, 256, 110),
    IQ2_S(22, 256, 82),
    IQ4_XS(23, 256, 136),
    I8(24, 1, 1),
    I16(25, 1, 2),
    I32(26, 1, 4),
    I64(27, 1, 8),
    F64(28, 1, 8),
    IQ1_M(29, 256, 56),
    BF16(30, 1, 2),
    TQ1_0(34, 256, 54),
    TQ2_0(35, 256, 66),
    MXFP4(39, 32, 17);

    public final int id;
    public final int blockValues;
    public final int blockBytes;

    GgmlType(int id, int blockValues, int blockBytes) {
        this.id = id;
        this.blockValues = blockValues;
        this.blockBytes = blockBytes;
    }

    private static final GgmlType[] BY_ID = new GgmlType[64];
    static {
        for (GgmlType t : values()) BY_ID[t.id] = t;
    }

    /** The type with this id, or null when dgr does not know it. */
    public static GgmlType byIdOrNull(int id) {
        return id >= 0 && id < BY_ID.length ? BY_ID[id] : null;
    }

    /** The type with this id; the message names the tensor so a user can find it. */
    public static GgmlType byId(int id, String tensorName) {
        GgmlType t = byIdOrNull(id);
        if (t == null) {
            throw new GgufFormatException("tensor '" + tensorName + "' has unsupported ggml type id " + id
                    + " (dgr supports " + java.util.Arrays.toString(values()) + ")");
        }
        return t;
    }

    /** Bytes needed for {@code n} values; n must be a multiple of the block size. */
    public long bytesFor(long n) {
        if (n % blockValues != 0) {
            throw new GgufFormatException(name() + " needs a multiple of " + blockValues + " values, got " + n);
        }
        return Math.multiplyExact(n / blockValues, (long) blockBytes);
    }

    public boolean isQuantized() {
        return blockValues > 1;
    }

    /** Parses a type name as written by users and llama.cpp ("q4_0", "Q4_K", "bf16"). */
    public static GgmlType parse(String s) {
        try {
            return valueOf(s.trim().toUpperCase(java.util.Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("unknown quantization type '" + s + "'");
        }
    }
}
