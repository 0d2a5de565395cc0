package dgr.bench.target;

/**
 * What the benchmark knows about the thing it measures. Fields a target cannot know are null (or
 * -1 for counts) and the report says "unavailable" for them rather than guessing.
 *
 * @param kind                 {@code in-process} or {@code http}
 * @param endpoint             model file or URL
 * @param modelName            the model's name (GGUF general.name or the server's model id)
 * @param architecture         {@code llama}, {@code deepseek4}, or null when the server does not say
 * @param lane                 {@code dense} or {@code v4}
 * @param recipeId             the recipe id, or null
 * @param artifactSha256       the artifact's sha256, or null
 * @param engine               engine id and version, or null
 * @param vocabSize            vocabulary size (random prompts draw ids below it)
 * @param contextLength        positions per session, or -1
 * @param rowLimit             sessions per batch (scheduler maxBatchSessions), or -1
 * @param stateBytesPerToken   state bytes per token of a workload-sized session (see {@code stateBytesBasis}),
 *                             or -1
 * @param stateBudgetBytes     the scheduler's state budget, or -1
 * @param promptTokenWeight    service units per prompt token (the scheduler's fairness weights)
 * @param generatedTokenWeight service units per generated token
 * @param decodeWaitBound      configured bound on a running decode session's wait, iterations, or -1
 * @param prefillWaitBound     configured bound on an admitted prefill's wait, iterations, or -1
 * @param fairness             whether tenant fairness counters are on (null when unknown)
 * @param stateBytesBasis      how {@code stateBytesPerToken} was obtained (linear layout, or an average
 *                             at a given session length for layouts that are not linear), or null
 */
public record TargetInfo(String kind, String endpoint, String modelName, String architecture, String lane,
                         String recipeId, String artifactSha256, String engine, int vocabSize, int contextLength,
                         int rowLimit, long stateBytesPerToken, long stateBudgetBytes, int promptTokenWeight,
                         int generatedTokenWeight, int decodeWaitBound, int prefillWaitBound, Boolean fairness,
                         String stateBytesBasis) {

    /** The lane an architecture belongs to (DESIGN.md: dense = llama, v4 = deepseek4). */
    public static String laneOf(String architecture) {
        if (architecture == null) return null;
        return switch (architecture) {
            case "deepseek4" -> "v4";
            default -> "dense";
        };
    }
}
