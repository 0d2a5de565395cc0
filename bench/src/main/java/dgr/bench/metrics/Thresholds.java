package dgr.bench.metrics;

/**
 * Pass/fail thresholds of the fairness checks (written into the report next to each result).
 *
 * @param minJain              Jain's index over per-session decode rates must reach this
 * @param minFairShareRatio    every tenant's service share ÷ its max-min fair share must reach this
 * @param serviceGapRequests   the backlogged-service gap may be at most (row limit + this) × the
 *                             largest single request's service
 */
public record Thresholds(double minJain, double minFairShareRatio, double serviceGapRequests) {
    public static Thresholds defaults() { return new Thresholds(0.8, 0.5, 1.0); }
}
