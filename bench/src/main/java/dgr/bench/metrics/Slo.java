package dgr.bench.metrics;

/** Latency targets: p95 TTFT and p95 ITL in milliseconds (null = no target). */
public record Slo(Double ttftP95Ms, Double itlP95Ms) {
    public boolean isSet() { return ttftP95Ms != null || itlP95Ms != null; }

    /** Whether a level's latencies meet both targets. */
    public boolean met(Summary ttft, Summary itl) {
        if (ttftP95Ms != null && (ttft == null || ttft.p95() > ttftP95Ms)) return false;
        return itlP95Ms == null || itl == null || itl.p95() <= itlP95Ms;
    }
}
