package dgr.runtime;

/**
 * The phase part of a {@link CompatibilityKey}. An engine that accepts prefill chunks and decode
 * rows in one forward pass puts both in {@link #MIXED}; otherwise they are separate groups.
 */
public enum PhaseClass { MIXED, PREFILL, DECODE }
