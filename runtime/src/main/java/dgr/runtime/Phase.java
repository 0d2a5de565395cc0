package dgr.runtime;

/** Where a session is in its life. The last three are terminal. */
public enum Phase {
    /** Prompt tokens are still to be processed. */
    PREFILL,
    /** The prompt is processed; one row per iteration feeds the last generated token. */
    DECODE,
    FINISHED,
    CANCELLED,
    FAILED;

    public boolean isTerminal() {
        return this == FINISHED || this == CANCELLED || this == FAILED;
    }
}
