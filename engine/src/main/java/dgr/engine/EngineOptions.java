package dgr.engine;

/**
 * How to build an engine for a model file.
 *
 * @param kind          SIMD (Vector API kernels), Q8 (SIMD with Q4_0 against 8-bit activations) or SCALAR (plain Java reference)
 * @param threads       worker threads for one forward pass
 * @param maxRows       most rows per batch
 * @param firstLayer    first layer of the span, or 0
 * @param endLayer      end of the span (exclusive), or -1 for the model's last layer
 * @param contextLength positions per session, or -1 for the model's own (capped by {@link #DEFAULT_CONTEXT_CAP})
 */
public record EngineOptions(Kind kind, int threads, int maxRows, int firstLayer, int endLayer, int contextLength) {
    public enum Kind {
        /** {@code java-simd/1}: f32 activations, Vector API kernels. */
        SIMD,
        /** {@code java-scalar/1}: plain Java reference kernels. */
        SCALAR,
        /** {@code java-q8/1}: {@code java-simd/1} with Q4_0 matrices against activations rounded to 8 bits. */
        Q8;

        /** The kind an {@code --engine} value names: {@code simd}, {@code q8} or {@code scalar}. */
        public static Kind ofFlag(String value) {
            return switch (value) {
                case "simd" -> SIMD;
                case "q8" -> Q8;
                case "scalar" -> SCALAR;
                default -> throw new IllegalArgumentException("--engine must be simd, q8 or scalar, not '" + value + "'");
            };
        }
    }

    /** Help text for {@code --engine} options. */
    public static final String ENGINE_HELP = "simd (java-simd/1, f32 activations; default), q8 (java-q8/1: Q4_0 against 8-bit"
            + " activations, as llama.cpp; native AVX-512 VNNI kernel where available) or scalar (java-scalar/1, reference)";

    /** Default cap on context so a 128k-context model does not reserve absurd state per session. */
    public static final int DEFAULT_CONTEXT_CAP = 4096;

    public static EngineOptions defaults() {
        return new EngineOptions(Kind.SIMD, Math.max(1, Runtime.getRuntime().availableProcessors()), 64, 0, -1, -1);
    }

    public EngineOptions withKind(Kind k) { return new EngineOptions(k, threads, maxRows, firstLayer, endLayer, contextLength); }
    public EngineOptions withThreads(int t) { return new EngineOptions(kind, t, maxRows, firstLayer, endLayer, contextLength); }
    public EngineOptions withMaxRows(int r) { return new EngineOptions(kind, threads, r, firstLayer, endLayer, contextLength); }
    public EngineOptions withSpan(int first, int end) { return new EngineOptions(kind, threads, maxRows, first, end, contextLength); }
    public EngineOptions withContextLength(int c) { return new EngineOptions(kind, threads, maxRows, firstLayer, endLayer, c); }
}
