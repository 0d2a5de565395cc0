package dgr.engine;

/**
 * The output of one forward pass, owned by the engine and valid until its next forward call (so
 * the hot path allocates nothing). On the last stage, rows that asked for output have logits; on
 * other stages they have boundary activations for the next stage.
 */
public interface ForwardResult {
    /** Logits ({@code vocabSize} floats) of a row that asked for output, at {@code array()[offset..]}. */
    float[] outputArray();

    /** Offset of {@code row}'s output in {@link #outputArray()}. */
    int outputOffset(int row);

    /** Width of one output row: vocab size on the last stage, boundary width otherwise. */
    int outputWidth();

    /** Copies one row's output into a new array (for tests and callers off the hot path). */
    default float[] copyOutput(int row) {
        float[] out = new float[outputWidth()];
        System.arraycopy(outputArray(), outputOffset(row), out, 0, out.length);
        return out;
    }
}
