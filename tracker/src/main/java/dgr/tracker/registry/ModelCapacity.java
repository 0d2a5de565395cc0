package dgr.tracker.registry;

/**
 * One model a node serves, as its last report said.
 *
 * @param model                     the id clients name
 * @param recipeId                  the recipe that fixes its numbers (null for a backend that does not say);
 *                                  a stream is only ever resumed on a node with the same recipe
 * @param recommendedMaxConcurrency the running sessions the node measured it can sustain for this model
 * @param measured                  true when that number comes from a saturation recommendation, false when
 *                                  it is only the node's configured limit (marked so in /v1/nodes)
 * @param limitSource               where the number comes from, in the node's words (saturation, operator, default)
 * @param reportedRunning           running sessions the node reported
 * @param reportedWaiting           sessions waiting for admission the node reported
 * @param contextLength             the context length the node serves it with, or 0 when unknown
 * @param engine                    the engine id and version that runs it ({@code java-q8/1}), or null when unknown
 * @param sessionThroughput         tokens/s one session gets at the recommendation, as measured
 *                                  ({@code expected_per_session_output_throughput}), or 0 when unknown
 * @param outputThroughput          tokens/s the node sustains over all its sessions at the recommendation, as
 *                                  measured ({@code expected_output_throughput}), or 0 when unknown
 */
public record ModelCapacity(String model, String recipeId, int recommendedMaxConcurrency, boolean measured,
                            String limitSource, int reportedRunning, int reportedWaiting, int contextLength,
                            String engine, double sessionThroughput, double outputThroughput) {
    public ModelCapacity {
        if (model == null || model.isBlank()) throw new IllegalArgumentException("a model needs an id");
        if (recommendedMaxConcurrency < 1) {
            throw new IllegalArgumentException("model " + model + ": recommended_max_concurrency must be >= 1, got "
                    + recommendedMaxConcurrency);
        }
    }

    /** Whether both measured speeds are known, so expected delays can be compared across nodes. */
    public boolean speedMeasured() { return sessionThroughput > 0 && outputThroughput > 0; }

    /**
     * What must be equal for a stream to resume here bit-identically: the recipe and the engine (their pair
     * is what a compatibility key fixes); null when the node does not say, so nothing resumes on it.
     */
    public String resumeKey() {
        return recipeId == null || engine == null ? null : recipeId + " " + engine;
    }
}
