package dgr.tracker.registry;

/**
 * A later stage of a route (not a head), as its capability report's {@code stage} object said: which
 * span of which model it serves, how its rows and state look, where heads dial it and how busy it is.
 * The tracker never routes client requests to it; heads ask for it as an alternate of a hop
 * ({@code GET /v1/stages}, docs/tracker.md).
 *
 * @param modelRecipeId    the whole model's recipe id (equal on every stage of a route)
 * @param firstLayer       first layer of the span
 * @param endLayer         end of the span (exclusive)
 * @param nLayers          the model's layer count
 * @param boundarySchemaId the schema of the boundary rows it takes
 * @param stateLayoutId    the layout of the state it keeps per session
 * @param engine           engine id and version ({@code java-simd/3}): with the recipe, what fixes its bits
 * @param address          {@code host:port} of its gRPC stage port, as heads dial it
 * @param sessions         sessions it held at its last report
 * @param maxBatchRows     rows one forward pass of its span takes
 */
public record StageSpan(String modelRecipeId, int firstLayer, int endLayer, int nLayers, String boundarySchemaId,
                        String stateLayoutId, String engine, String address, int sessions, int maxBatchRows) {

    /** Rows it could still take in one pass: what orders the stages offered for one hop. */
    public int headroom() { return maxBatchRows - sessions; }

    /** Whether it serves exactly layers {@code [first, end)} of the model with this recipe. */
    public boolean serves(String recipe, int first, int end) {
        return modelRecipeId.equals(recipe) && firstLayer == first && endLayer == end;
    }
}
