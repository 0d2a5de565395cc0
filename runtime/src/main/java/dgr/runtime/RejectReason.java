package dgr.runtime;

/** Why a submission was refused; nothing was allocated for it. */
public enum RejectReason {
    /** The waiting queue is full ({@code maxWaitingSessions}); retry later (HTTP 429/503). */
    OVER_CAPACITY,
    /** Prompt plus {@code maxTokens} exceed the recipe's context length (HTTP 400). */
    EXCEEDS_CONTEXT,
    /** Its state reservation is larger than the whole state budget: it could never run (HTTP 400). */
    EXCEEDS_STATE_BUDGET,
    /** Malformed: empty prompt, token id out of range, stop strings without a decoder (HTTP 400). */
    INVALID_REQUEST,
    /** The scheduler is closed (HTTP 503). */
    CLOSED
}
