package dgr.engine.kernel;

/**
 * How a {@link WeightMatrix}'s bytes are arranged. {@code GGML} is the file's own block layout
 * (the mapped tensor, no copy); the others are copies the SIMD kernels make once at load
 * ({@link Kernels#prepare}) because they decode faster. A layout never changes what is computed
 * beyond its kernel's documented per-element order.
 */
public enum WeightLayout {
    /** The GGUF block layout of the weight type, row after row. */
    GGML,
    /** Q4_0 regrouped into 64-value spans, f16 scales kept: see {@link Q4Spans}. */
    Q4_0_SPANS,
    /** Q4_0 for 8-bit activations, rows interleaved in groups of 16, f16 scales kept: see {@link Q8Rows}. */
    Q4_0_Q8,
    /** Q8_0 for 8-bit activations, rows interleaved in groups of 16, f16 scales kept: see {@link Q8Rows}. */
    Q8_0_Q8,
    /** Q4_K for 8-bit activations, rows interleaved in groups of 16, a byte per scale and min: see {@link Q8Rows.KQuants}. */
    Q4_K_Q8,
    /** Q5_K for 8-bit activations, rows interleaved in groups of 16, a byte per scale and min: see {@link Q8Rows.KQuants}. */
    Q5_K_Q8,
    /** Q6_K for 8-bit activations, rows interleaved in groups of 16: see {@link Q8Rows.KQuants}. */
    Q6_K_Q8,
    /** IQ4_NL for 8-bit activations, as {@link #Q4_0_Q8} with grid indices: see {@link Q8Rows}. */
    IQ4_NL_Q8,
    /** IQ4_XS for 8-bit activations, rows interleaved in groups of 16, a byte per scale: see {@link Q8Rows.KQuants}. */
    IQ4_XS_Q8,
    /** MXFP4 for 8-bit activations, as {@link #Q4_0_Q8} with E2M1 codes and exponent bytes: see {@link Q8Rows}. */
    MXFP4_Q8,
    /** Q4_1, Q5_0 and Q5_1 for 8-bit activations, rows interleaved in groups of 16: see {@link Q8Rows#packLegacy}. */
    Q4_1_Q8,
    Q5_0_Q8,
    Q5_1_Q8,
    /** Q2_K for 8-bit activations, rows interleaved in groups of 16: see {@link Q8Rows#packQ2Q3_K}. */
    Q2_K_Q8,
    /** Q3_K for 8-bit activations, rows interleaved in groups of 16, an int8 scale per 16 values: see {@link Q8Rows#packQ2Q3_K}. */
    Q3_K_Q8,
    /** Q4_K regrouped into 64-value spans, byte scales and mins, f32 d and dmin: see {@link Q4Spans}. */
    Q4_K_SPANS,
    /** Q4_1 regrouped into 64-value spans, f16 d and m kept: see {@link Q4Spans}. */
    Q4_1_SPANS,
    /** Q6_K with one byte per quant in 32-value spans, int8 scales, f32 d: see {@link ByteSpans}. */
    Q6_K_SPANS,
    /** Q5_K with one byte per quant in 32-value spans, a byte of scale and min per 16 values, f32 d and dmin: see {@link ByteSpans}. */
    Q5_K_SPANS,
    /** Q3_K with one byte per quant in 32-value spans, int8 scales (sc − 32), f32 d: see {@link ByteSpans}. */
    Q3_K_SPANS,
    /** Q2_K with one byte per quant in 32-value spans, a byte of scale and min per 16 values, f32 d and dmin: see {@link ByteSpans}. */
    Q2_K_SPANS,
    /** Q5_0 with one byte per quant in 32-value spans, f16 d kept: see {@link ByteSpans}. */
    Q5_0_SPANS,
    /** Q5_1 with one byte per quant in 32-value spans, f16 d and m kept: see {@link ByteSpans}. */
    Q5_1_SPANS,
    /** IQ4_NL with each quant's grid value + 128 as a byte in 32-value spans, f16 d kept: see {@link ByteSpans}. */
    IQ4_NL_SPANS,
    /** IQ4_XS with each quant's grid value + 128 as a byte in 32-value spans, int8 scales (ls − 32), f32 d: see {@link ByteSpans}. */
    IQ4_XS_SPANS,
    /** MXFP4 with each value's E2M1 point ×2 + 128 as a byte in 32-value spans, the E8M0 exponent byte per block kept: see {@link ByteSpans}. */
    MXFP4_SPANS,
    /** TQ1_0 with each trit (0..2) as a byte in 32-value spans, f32 d, int8 scales of 1: see {@link ByteSpans}. */
    TQ1_0_SPANS,
    /** TQ2_0 with each trit (0..2) as a byte in 32-value spans, f32 d, int8 scales of 1: see {@link ByteSpans}. */
    TQ2_0_SPANS,
    /**
     * The IQ1/IQ2/IQ3 types in their integer form ({@link dgr.gguf.codec.IntegerBlock}): each
     * value's signed integer + 128 as a byte in 32-value spans, int8 scales per 16, f32 d per 256:
     * see {@link ByteSpans}.
     */
    IQ1_S_SPANS,
    IQ1_M_SPANS,
    IQ2_XXS_SPANS,
    IQ2_XS_SPANS,
    IQ2_S_SPANS,
    IQ3_XXS_SPANS,
    IQ3_S_SPANS;

    /**
     * Rows stored together: 1 where rows follow each other whole, {@link Q8Rows#GROUP} for the
     * layouts for 8-bit activations, whose rows interleave in groups (a row slice must start at a
     * group).
     */
    public int rowGroup() {
        return switch (this) {
            case Q4_0_Q8, Q8_0_Q8, Q4_K_Q8, Q5_K_Q8, Q6_K_Q8, IQ4_NL_Q8, IQ4_XS_Q8, MXFP4_Q8, Q4_1_Q8, Q5_0_Q8, Q5_1_Q8, Q2_K_Q8,
                 Q3_K_Q8 -> Q8Rows.GROUP;
            default -> 1;
        };
    }
}
