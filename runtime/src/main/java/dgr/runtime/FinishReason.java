package dgr.runtime;

/** Why a session's stream ended; {@link #wireName()} is what OpenAI-style clients see. */
public enum FinishReason {
    /** An end-of-generation token or a stop string. */
    STOP,
    /** {@code maxTokens} generated. */
    LENGTH,
    /** Cancelled by its owner, by its deadline, or by the scheduler closing. */
    CANCELLED,
    /** The engine or the session's sampler failed; the message says how. */
    ERROR,
    /** A stage of the session's route died or hung and no alternate serves its span; the message names it. */
    UNAVAILABLE;

    public String wireName() { return name().toLowerCase(); }
}
