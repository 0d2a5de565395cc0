package dgr.bench.load;

import java.time.Duration;

/**
 * One measured point of a sweep.
 *
 * @param label       {@code c4} (closed loop, 4 clients), {@code r2.5} (open loop, 2.5 req/s), {@code warmup}
 * @param closedLoop  closed loop (each client sends its next request when the last ends) or open loop
 * @param concurrency clients of a closed loop; open loop: 0
 * @param rate        open loop: mean requests per second of Poisson arrivals; closed loop: 0
 * @param requests    requests to send (a closed loop stops issuing when reached)
 * @param duration    stop issuing after this long, whatever the count
 */
public record Level(String label, boolean closedLoop, int concurrency, double rate, int requests, Duration duration) {
    public static Level closed(int concurrency, int requests, Duration duration) {
        return new Level("c" + concurrency, true, concurrency, 0, requests, duration);
    }

    public static Level open(double rate, int requests, Duration duration) {
        String r = rate == Math.rint(rate) ? Long.toString((long) rate) : Double.toString(rate);
        return new Level("r" + r, false, 0, rate, requests, duration);
    }
}
