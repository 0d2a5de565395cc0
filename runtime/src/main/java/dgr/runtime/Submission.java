package dgr.runtime;

/** The answer to {@link Scheduler#submit}: a running session, or a clear refusal. */
public sealed interface Submission {
    record Accepted(Session session) implements Submission {}

    record Rejected(RejectReason reason, String message) implements Submission {}
}
