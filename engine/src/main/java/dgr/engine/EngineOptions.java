package dgr.engine;

/**
 * How to build an engine for a model file.
 *
 * @param kind          SIMD (Vector API kernels) or SCALAR (plain Java reference)
 * @param threads       worker threads for one forward pass
 * @param maxRows       most rows per batch
 * @param firstLayer    first layer of the span, or 0
 * @param endLayer      end of the span (exclusive), or -1 for the model's last layer
 * @param contextLength positions per session, or -1 for the model's own (capped by {@link #DEFAULT_CONTEXT_CAP})
 */
public record EngineOptions(Kind kind, int threads, int maxRows, int firstLayer, int endLayer, int contextLength) {
    public enum Kind { SIMD, SCALAR }

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
