package dgr.bench.saturation;

import java.util.List;

/**
 * One entry of saturation.json: the saturation recommendation for one recipe and lane, with its
 * provenance (docs/schemas/saturation.schema.json describes every field).
 */
public record Recommendation(String recipeId, String lane, String architecture, String artifactSha256,
                             String modelName, String engine, String target, List<Integer> concurrencyTested,
                             List<Double> outputThroughputTested, Integer kneeConcurrency, String kneeStatus,
                             KneeRule kneeRule, Integer maxConcurrencyMeetingSlo, SloUsed slo,
                             int recommendedMaxConcurrency, String recommendationBasis, double recommendationFactor,
                             double expectedOutputThroughput, double expectedPerSessionOutputThroughput,
                             Long stateBytesPerToken, String stateBytesPerTokenBasis, Long stateBudgetBytes, Integer sessionsFittingStateBudget,
                             String measuredAt, Machine machine) {

    public record KneeRule(String method, double slopeRatio, int minPoints, double slope1, double slope2,
                           String reason) {}

    public record SloUsed(Double ttftP95Ms, Double itlP95Ms) {}

    /** Where it was measured. */
    public record Machine(String hostname, String cpuModel, int cores, Long memoryBytes, String os, String jvm) {}
}
