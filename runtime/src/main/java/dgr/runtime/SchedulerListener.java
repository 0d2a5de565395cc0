package dgr.runtime;

/**
 * Receives {@link SchedulerEvent}s on the scheduler thread (rejections on the submitting thread):
 * keep it short and non-blocking, it runs inside the loop. Exceptions are logged and dropped.
 */
@FunctionalInterface
public interface SchedulerListener {
    void onEvent(SchedulerEvent event);
}
