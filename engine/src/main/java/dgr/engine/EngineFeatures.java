package dgr.engine;

/**
 * What an engine declares to the scheduler.
 *
 * @param mixedPrefillDecode whether prefill chunks and decode rows may share one batch (then they
 *                           share a phase class in the compatibility key)
 * @param maxRows            the most rows one forward pass accepts
 * @param threads            worker threads one forward pass uses
 */
public record EngineFeatures(boolean mixedPrefillDecode, int maxRows, int threads) {}
