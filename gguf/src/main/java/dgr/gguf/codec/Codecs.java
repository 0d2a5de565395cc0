package dgr.gguf.codec;

import dgr.gguf.GgmlType;
import dgr.gguf.GgufFormatException;
import java.util.Collections;
import java.util.EnumMap;
import java.util.Map;
import java.util.Set;

/** The block codec for each ggml type dgr can convert to and from float32. */
public final class Codecs {
    private static final Map<GgmlType, BlockCodec> BY_TYPE;

    static {
        Map<GgmlType, BlockCodec> m = new EnumMap<>(GgmlType.class);
        for (BlockCodec c : new BlockCodec[] {
                new F32Codec(), new F16Codec(), new Bf16Codec(),
                new Q8_0Codec(), new Q8_1Codec(), new Q4_0Codec(), new Q4_1Codec(), new Q5_0Codec(), new Q5_1Codec(),
                new Q2_KCodec(), new Q3_KCodec(), new Q4_KCodec(), new Q5_KCodec(), new Q6_KCodec(), new Q8_KCodec(),
                new Iq4NlCodec(), new Iq4XsCodec(), new Mxfp4Codec(), new Tq1_0Codec(), new Tq2_0Codec(),
                new Iq2XxsCodec(), new Iq2XsCodec(), new Iq2SCodec(), new Iq3XxsCodec(), new Iq3SCodec(), new Iq1SCodec(), new Iq1MCodec()}) {
            m.put(c.type(), c);
        }
        BY_TYPE = Collections.unmodifiableMap(m);
    }

    private Codecs() {}

    /**
     * The codec for {@code type}. Integer and float64 tensors (I8…I64, F64) are not weights and
     * have no float32 codec; asking for one is a model dgr cannot run, so the error says which.
     */
    public static BlockCodec of(GgmlType type) {
        BlockCodec c = BY_TYPE.get(type);
        if (c == null) {
            throw new GgufFormatException("no float32 codec for ggml type " + type + " (id " + type.id
                    + "); dgr converts " + supported());
        }
        return c;
    }

    /** The integer form of a type's blocks (the IQ1/IQ2/IQ3 types), or null when it has none. */
    public static IntegerBlock integerBlock(GgmlType type) {
        return BY_TYPE.get(type) instanceof IntegerBlock b ? b : null;
    }

    public static boolean has(GgmlType type) {
        return BY_TYPE.containsKey(type);
    }

    /** The types with a codec, in ggml type-id order. */
    public static Set<GgmlType> supported() {
        return BY_TYPE.keySet();
    }
}
