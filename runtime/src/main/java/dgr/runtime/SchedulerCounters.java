package dgr.runtime;

/** Totals since the scheduler started; {@code submitted = admitted + rejected + waiting + cancelled-while-waiting}. */
public record SchedulerCounters(long submitted, long admitted, long rejected, long finished, long cancelled,
                                long failed, long iterations) {}
