package dgr.engine;

/**
 * How to build an engine for a model file.
 *
 * @param kind          SIMD (Vector API kernels), Q8 (SIMD with 8-bit activations for Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, IQ4_NL, MXFP4, Q2_K to Q6_K and IQ4_XS) or SCALAR
 *                      (plain Java reference), or AUTO (the default) for the architecture's best
 * @param threads       worker threads for one forward pass
 * @param maxRows       most rows per batch
 * @param firstLayer    first layer of the span, or 0
 * @param endLayer      end of the span (exclusive), or -1 for the model's last layer
 * @param contextLength positions per session, or -1 for the model's own (capped by {@link #DEFAULT_CONTEXT_CAP})
 * @param cacheTypes    how a llama stage stores K and V ({@code --cache-type-k/-v}); DeepSeek-V4 keeps f32 only
 */
public record EngineOptions(Kind kind, int threads, int maxRows, int firstLayer, int endLayer, int contextLength,
                            KvCacheTypes cacheTypes) {
    public EngineOptions {
        if (cacheTypes == null) throw new IllegalArgumentException("cache types are required");
    }

    /** Options with f32 K/V. */
    public EngineOptions(Kind kind, int threads, int maxRows, int firstLayer, int endLayer, int contextLength) {
        this(kind, threads, maxRows, firstLayer, endLayer, contextLength, KvCacheTypes.F32);
    }

    public enum Kind {
        /** The best here ({@link #preferred}), for the llama family and DeepSeek-V4 alike. */
        AUTO,
        /** {@code java-simd/1}: f32 activations, Vector API kernels. */
        SIMD,
        /** {@code java-scalar/1}: plain Java reference kernels. */
        SCALAR,
        /** {@code java-q8/1}: {@code java-simd/1} with Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, IQ4_NL, MXFP4, Q2_K to Q6_K and IQ4_XS matrices against activations rounded to 8 bits. */
        Q8;

        /**
         * The default: {@link #Q8} where its native kernel runs on this CPU (x86-64 with AVX2 or
         * AVX-512 VNNI, Linux), else {@link #SIMD}, whose Vector API kernels are fast everywhere
         * (java-q8's Java fallback is a plain reference, slow).
         */
        public static Kind preferred() {
            return dgr.engine.kernel.Q8Kernels.nativeKernel() ? Q8 : SIMD;
        }

        /** The kind an {@code --engine} value names: {@code auto} ({@link #preferred}), {@code simd}, {@code q8} or {@code scalar}. */
        public static Kind ofFlag(String value) {
            return switch (value) {
                case "auto" -> AUTO;
                case "simd" -> SIMD;
                case "q8" -> Q8;
                case "scalar" -> SCALAR;
                default -> throw new IllegalArgumentException("--engine must be auto, simd, q8 or scalar, not '" + value + "'");
            };
        }
    }

    /** Help text for {@code --engine} options. */
    public static final String ENGINE_HELP = "auto (default: q8 where its native kernel runs, else simd), q8 (java-q8/1:"
            + " Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, IQ4_NL, MXFP4, Q2_K to Q6_K, IQ4_XS against activations rounded to 8 bits, as llama.cpp does; native AVX-512 VNNI or AVX2"
            + " kernel), simd (java-simd/1: f32 activations, within 1e-6 of exact maths) or scalar (java-scalar/1, reference)";

    /** Default cap on context so a 128k-context model does not reserve absurd state per session. */
    public static final int DEFAULT_CONTEXT_CAP = 4096;

    public static EngineOptions defaults() {
        return new EngineOptions(Kind.AUTO, Math.max(1, Runtime.getRuntime().availableProcessors()), 64, 0, -1, -1);
    }

    public EngineOptions withKind(Kind k) { return new EngineOptions(k, threads, maxRows, firstLayer, endLayer, contextLength, cacheTypes); }
    public EngineOptions withThreads(int t) { return new EngineOptions(kind, t, maxRows, firstLayer, endLayer, contextLength, cacheTypes); }
    public EngineOptions withMaxRows(int r) { return new EngineOptions(kind, threads, r, firstLayer, endLayer, contextLength, cacheTypes); }
    public EngineOptions withSpan(int first, int end) { return new EngineOptions(kind, threads, maxRows, first, end, contextLength, cacheTypes); }
    public EngineOptions withContextLength(int c) { return new EngineOptions(kind, threads, maxRows, firstLayer, endLayer, c, cacheTypes); }
    public EngineOptions withCacheTypes(KvCacheTypes t) { return new EngineOptions(kind, threads, maxRows, firstLayer, endLayer, contextLength, t); }
}
