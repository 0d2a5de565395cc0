package dgr.bench.target;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Finds the longest decode stall and the longest prefill wait in a level's iteration trace.
 *
 * <p>A session admitted at the start of iteration {@code a} is owed service from {@code a} on. Each
 * time it shows up in a batch, the iterations since it was last served (or since admission) are a
 * wait: a prefill wait while its prompt is unfinished, a decode stall once its prompt is done (it
 * is in DECODE from the iteration after its last prefill chunk, so the gap before its first decode
 * row is a decode stall too). Wall time of a wait runs from the end of the serving iteration (or
 * the start of the admitting one) to the start of the next serving iteration.
 */
public final class StallAnalyzer {
    // Also: each session's decode service rate in iterations (decode rows it got ÷ iterations from
    // when it became decodable to its last row), free of wall-clock noise from other processes.
    /** One iteration with the sequence ids it served. */
    public record Trace(long iteration, long endNanos, long durationNanos, long[] prefillIds, long[] decodeIds) {
        long startNanos() { return endNanos - durationNanos; }
    }

    private static final class State {
        long lastServed;
        long lastEndNanos;
        boolean decoding;
        long decodeFrom;
        long decodeLast;
        int decodeServed;
    }

    private StallAnalyzer() {}

    /**
     * @param traces     iterations in ascending order
     * @param admittedAt sequence id → iteration at whose start it was admitted
     */
    public static StallReport analyze(List<Trace> traces, Map<Long, Long> admittedAt) {
        Map<Long, List<Long>> admissionsByIteration = new HashMap<>();
        admittedAt.forEach((seq, it) -> admissionsByIteration.computeIfAbsent(it, k -> new java.util.ArrayList<>()).add(seq));
        Map<Long, State> states = new HashMap<>();
        int decodeIt = 0, prefillIt = 0, decodeSeen = 0;
        double decodeMs = 0, prefillMs = 0;
        for (Trace t : traces) {
            List<Long> admitted = admissionsByIteration.get(t.iteration());
            if (admitted != null) {
                for (long seq : admitted) {
                    State s = new State();
                    s.lastServed = t.iteration() - 1;
                    s.lastEndNanos = t.startNanos();
                    states.put(seq, s);
                }
            }
            for (long seq : t.prefillIds()) {
                State s = states.get(seq);
                if (s == null) continue; // admitted before the trace began
                int waited = (int) (t.iteration() - s.lastServed - 1);
                double ms = Math.max(0, t.startNanos() - s.lastEndNanos) / 1e6;
                prefillIt = Math.max(prefillIt, waited);
                prefillMs = Math.max(prefillMs, waited > 0 ? ms : 0);
                s.lastServed = t.iteration();
                s.lastEndNanos = t.endNanos();
            }
            for (long seq : t.decodeIds()) {
                State s = states.get(seq);
                if (s == null) continue;
                if (!s.decoding) {
                    s.decoding = true;
                    s.decodeFrom = s.lastServed + 1;
                    decodeSeen++;
                }
                s.decodeServed++;
                s.decodeLast = t.iteration();
                int waited = (int) (t.iteration() - s.lastServed - 1);
                double ms = Math.max(0, t.startNanos() - s.lastEndNanos) / 1e6;
                decodeIt = Math.max(decodeIt, waited);
                decodeMs = Math.max(decodeMs, waited > 0 ? ms : 0);
                s.lastServed = t.iteration();
                s.lastEndNanos = t.endNanos();
            }
        }
        double[] rates = states.values().stream().filter(s -> s.decodeServed > 0)
                .mapToDouble(s -> s.decodeServed / (double) (s.decodeLast - s.decodeFrom + 1)).toArray();
        return new StallReport(decodeIt, decodeMs, prefillIt, prefillMs, decodeSeen, states.size(), rates);
    }
}
