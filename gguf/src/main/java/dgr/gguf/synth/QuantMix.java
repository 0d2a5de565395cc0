package dgr.gguf.synth;

import dgr.gguf.GgmlType;
import java.util.Locale;

/**
 * Which ggml type each tensor of a llama model gets for a quantization name, the way llama.cpp's
 * {@code llama-quantize} chooses: a plain type name makes every 2-D matrix that type ("--pure"),
 * the {@code _M} mixes spend more bits on the output head and on some {@code attn_v} and
 * {@code ffn_down} layers. 1-D norm weights always stay F32.
 */
public record QuantMix(String name, GgmlType base, int fileType) {

    /** Every name {@link #parse} takes, in the order help texts list them: the weight types, then the mixes. */
    public static final java.util.List<String> NAMES = java.util.stream.Stream.concat(
            java.util.Arrays.stream(GgmlType.values())
                    .filter(t -> t != GgmlType.Q8_1 && t != GgmlType.I8 && t != GgmlType.I16 && t != GgmlType.I32
                            && t != GgmlType.I64 && t != GgmlType.F64)
                    .map(GgmlType::name),
            java.util.stream.Stream.of("Q3_K_M", "Q4_K_M", "Q5_K_M", "MXFP4_MOE")).toList();

    public static QuantMix parse(String s) {
        String n = s.trim().toUpperCase(Locale.ROOT);
        return switch (n) {
            case "Q3_K_M" -> new QuantMix(n, GgmlType.Q3_K, 12);
            case "Q4_K_M" -> new QuantMix(n, GgmlType.Q4_K, 15);
            case "Q5_K_M" -> new QuantMix(n, GgmlType.Q5_K, 17);
            // llama-quantize's MXFP4_MOE: experts (ffn_*_exps) MXFP4, every other matrix Q8_0.
            case "MXFP4_MOE" -> new QuantMix(n, GgmlType.MXFP4, 38);
            default -> {
                GgmlType t;
                try {
                    t = GgmlType.valueOf(n);
                } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException("unknown quantization '" + s + "'; use one of " + String.join(", ", NAMES));
                }
                if (t == GgmlType.Q8_1 || t == GgmlType.I8 || t == GgmlType.I16 || t == GgmlType.I32
                        || t == GgmlType.I64 || t == GgmlType.F64) {
                    throw new IllegalArgumentException("quantization " + t + " is not a weight format");
                }
                yield new QuantMix(n, t, pureFileType(t));
            }
        };
    }

    /** llama.cpp's {@code general.file_type} (LLAMA_FTYPE_*) for pure files. */
    private static int pureFileType(GgmlType t) {
        return switch (t) {
            case F32 -> 0; case F16 -> 1; case Q4_0 -> 2; case Q4_1 -> 3; case Q8_0 -> 7; case Q5_0 -> 8;
            case Q5_1 -> 9; case Q2_K -> 10; case Q3_K -> 12; case Q4_K -> 15; case Q5_K -> 17; case Q6_K -> 18;
            case IQ4_NL -> 25; case IQ4_XS -> 30; case BF16 -> 32; case TQ1_0 -> 36; case TQ2_0 -> 37;
            case IQ2_XXS -> 19; case IQ2_XS -> 20; case IQ3_XXS -> 23; case IQ1_S -> 24; case IQ3_S -> 26; case IQ2_S -> 28; case IQ1_M -> 31;
            default -> 0; // Q8_K has no llama.cpp file type; 0 is what gguf-py leaves for unknown mixes
        };
    }

    private boolean isMix() { return name.endsWith("_M"); }

    /**
     * The type of one 2-D matrix. {@code layer} is -1 for non-block tensors; {@code tiedOutput} is
     * true for token_embd when the model has no separate output head (llama.cpp then treats it as the
     * output).
     */
    public GgmlType typeFor(String tensor, int layer, int nLayer, boolean tiedOutput) {
        if (name.equals("MXFP4_MOE")) return tensor.contains("_exps.") ? GgmlType.MXFP4 : GgmlType.Q8_0;
        if (!isMix()) return base;
        boolean output = tensor.equals("output.weight") || (tiedOutput && tensor.equals("token_embd.weight"));
        if (output) return GgmlType.Q6_K;
        if (base == GgmlType.Q3_K) { // Q3_K_M
            if (tensor.endsWith("attn_v.weight")) return layer < 2 ? GgmlType.Q5_K : GgmlType.Q4_K;
            if (tensor.endsWith("attn_output.weight") || tensor.endsWith("ffn_down.weight")) return GgmlType.Q4_K;
            return base;
        }
        if (tensor.endsWith("attn_v.weight") || tensor.endsWith("ffn_down.weight")) {
            return useMoreBits(layer, nLayer) ? GgmlType.Q6_K : base;
        }
        return base;
    }

    /**
     * The type llama-quantize writes for a row of {@code cols} values when {@code t}'s 256-value
     * super-blocks do not divide it (SmolLM's 576-wide rows, say): IQ4_NL for Q2_K, Q3_K and
     * IQ4_XS, Q5_0 for Q4_K, Q5_1 for Q5_K, Q8_0 for Q6_K; {@code t} itself when its blocks fit.
     */
    public static GgmlType fitRow(GgmlType t, long cols) {
        if (cols % t.blockValues == 0) return t;
        return switch (t) {
            case Q2_K, Q3_K, IQ4_XS -> GgmlType.IQ4_NL;
            case Q4_K -> GgmlType.Q5_0;
            case Q5_K -> GgmlType.Q5_1;
            case Q6_K -> GgmlType.Q8_0;
            default -> t;
        };
    }

    /** llama.cpp's use_more_bits: the first and last eighth of the layers, and every third between. */
    static boolean useMoreBits(int i, int n) {
        return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2;
    }
}
