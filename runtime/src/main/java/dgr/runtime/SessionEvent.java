package dgr.runtime;

/** What a session's owner receives, in order: token events, then exactly one {@link Finished}. */
public sealed interface SessionEvent {
    /**
     * One generated token.
     *
     * @param index   0 for the first generated token
     * @param tokenId the sampled id
     * @param text    the text safe to stream now (may be empty: incomplete UTF-8, held back for a
     *                possible stop string, an end-of-generation id, or no decoder)
     */
    record TokenEvent(int index, int tokenId, String text) implements SessionEvent {}

    /** The stream's end. {@code message} explains cancellation and errors, else is empty. */
    record Finished(FinishReason reason, String message, Accounting accounting) implements SessionEvent {}
}
