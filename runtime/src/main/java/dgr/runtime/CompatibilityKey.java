package dgr.runtime;

import dgr.engine.Engine;
import dgr.engine.EngineId;

/**
 * Rows with different keys never share a batch (DESIGN.md, contract 3): same engine and version,
 * same recipe (so the same numbers), same phase class, same boundary schema and state layout.
 */
public record CompatibilityKey(EngineId engine, String recipeId, PhaseClass phaseClass, String boundarySchemaId,
                               String stateLayoutId) {

    /** The key of a session in {@code phase} (PREFILL or DECODE) on {@code engine}. */
    public static CompatibilityKey of(Engine engine, Phase phase) {
        return of(engine, phaseClassOf(engine, phase));
    }

    public static CompatibilityKey of(Engine engine, PhaseClass phaseClass) {
        return new CompatibilityKey(engine.id(), engine.recipe().id(), phaseClass, engine.boundarySchema().id(),
                engine.stateLayout().id());
    }

    public static PhaseClass phaseClassOf(Engine engine, Phase phase) {
        if (engine.features().mixedPrefillDecode()) return PhaseClass.MIXED;
        return switch (phase) {
            case PREFILL -> PhaseClass.PREFILL;
            case DECODE -> PhaseClass.DECODE;
            default -> throw new IllegalArgumentException("a " + phase + " session has no key: it runs no rows");
        };
    }

    @Override
    public String toString() {
        return engine + "|" + recipeId + "|" + phaseClass.name().toLowerCase() + "|" + boundarySchemaId + "|"
                + stateLayoutId;
    }
}
