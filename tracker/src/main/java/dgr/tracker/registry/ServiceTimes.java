package dgr.tracker.registry;

/**
 * What the tracker itself saw of one node serving one model: how long its first token took (from the
 * moment the request was routed to the node until its first chunk) and how long a session held its slot
 * (routed until it ended), each as a moving average. Routing reads them to estimate a request's time to
 * first token on the node (docs/tracker.md, "Routing"). Written by relay threads, read under the router's lock.
 */
public final class ServiceTimes {
    /** The weight of each new observation: about the last ten requests count. */
    static final double WEIGHT = 0.2;

    private double firstTokenSeconds = Double.NaN;
    private double sessionSeconds = Double.NaN;

    /** A request's first chunk came this long after it was routed here. */
    public synchronized void firstToken(long nanos) { firstTokenSeconds = average(firstTokenSeconds, nanos / 1e9); }

    /** A session that streamed held its slot this long. */
    public synchronized void session(long nanos) { sessionSeconds = average(sessionSeconds, nanos / 1e9); }

    /** The average time to first token, in seconds; NaN before the first. */
    public synchronized double firstTokenSeconds() { return firstTokenSeconds; }

    /** The average session duration, in seconds; NaN before the first. */
    public synchronized double sessionSeconds() { return sessionSeconds; }

    private static double average(double mean, double x) { return Double.isNaN(mean) ? x : mean + WEIGHT * (x - mean); }
}
