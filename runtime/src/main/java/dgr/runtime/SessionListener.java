package dgr.runtime;

/**
 * Receives a session's events on the scheduler thread, so it must not block: hand off to a queue
 * ({@link TokenStream}) and consume it elsewhere. A listener that throws is treated as a gone
 * client: the session is cancelled.
 */
@FunctionalInterface
public interface SessionListener {
    void onEvent(SessionEvent event);

    SessionListener NONE = e -> {};
}
