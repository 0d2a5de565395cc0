package dgr.bench.report;

import dgr.bench.saturation.Recommendation;
import java.util.List;

/**
 * saturation.json: versioned by {@link #SCHEMA_VERSION} and described by
 * docs/schemas/saturation.schema.json; nodes load it and report it in /v1/capabilities.
 */
public record SaturationFile(int schemaVersion, String generatedBy, String measuredAt, Recommendation.Machine machine,
                             List<Recommendation> recommendations, List<LaneStatus> lanesNotMeasured) {
    public static final int SCHEMA_VERSION = 1;
}
