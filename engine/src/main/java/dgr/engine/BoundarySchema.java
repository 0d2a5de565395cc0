package dgr.engine;

/**
 * What crosses between stages: one row of {@code rowWidth} values of {@code dtype} per token
 * ({@code n_embd} for llama, {@code hc_mult × n_embd} for deepseek4).
 */
public record BoundarySchema(String architecture, int rowWidth, String dtype, int version) {
    public String id() {
        return architecture + "-" + rowWidth + "x" + dtype + "-v" + version;
    }
}
