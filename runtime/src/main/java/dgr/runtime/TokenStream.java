package dgr.runtime;

import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A session's events as a blocking queue, for an owner on a (virtual) thread: the scheduler offers
 * without blocking; the owner takes until {@link SessionEvent.Finished}.
 */
public final class TokenStream implements SessionListener {
    private final LinkedBlockingQueue<SessionEvent> queue = new LinkedBlockingQueue<>();

    @Override
    public void onEvent(SessionEvent event) { queue.add(event); }

    /** The next event, waiting for it. */
    public SessionEvent take() throws InterruptedException { return queue.take(); }

    /** The next event, or null after {@code timeout}. */
    public SessionEvent poll(long timeout, TimeUnit unit) throws InterruptedException {
        return queue.poll(timeout, unit);
    }
}
