package dgr.bench.report;

/** Whether a lane was measured in this run, and why not when it was not. */
public record LaneStatus(String lane, String status, String reason) {}
