package dgr.runtime;

import dgr.engine.Batch;
import java.util.List;

/**
 * Chooses one iteration's rows from the running sessions and writes them into the batch, allocating
 * nothing. The rules and the wait bounds they guarantee are in docs/scheduler.md:
 * <ul>
 *   <li>every running decode session gets a row whenever decode runs (running ≤ maxBatchSessions);</li>
 *   <li>prefill chunks go to the sessions that waited longest (ties: earlier sequence id), each at
 *       most {@code maxPrefillChunk} tokens, until the token budget or the row limit is spent;</li>
 *   <li>mixed batches take all decode rows and then prefill chunks; decode-first runs prefill
 *       only when no decode is runnable, a prefill waited {@code maxPrefillWaitIterations} or a
 *       resumed session is in prefill (its client is mid-stream), and
 *       never more than {@code maxDecodeWaitIterations} iterations in a row.</li>
 * </ul>
 */
final class BatchPlanner {
    enum Kind { PREFILL, DECODE, MIXED }

    private static final long[] NO_IDS = new long[0];

    private final SchedulerConfig config;
    private final boolean mixes;
    private final Session[] sessions;
    private final int[] chunks;
    private final int[] outputRows;
    private final Session[] prefillOrder;
    private int count;
    private int prefillCount;
    private int decodeCount;
    private int tokens;
    /** Consecutive iterations the decode group was runnable but not run. */
    private int decodeWaited;

    BatchPlanner(SchedulerConfig config, boolean engineAcceptsMixed) {
        this.config = config;
        this.mixes = config.mixesOn(engineAcceptsMixed);
        this.sessions = new Session[config.maxBatchSessions()];
        this.chunks = new int[config.maxBatchSessions()];
        this.outputRows = new int[config.maxBatchSessions()];
        this.prefillOrder = new Session[config.maxBatchSessions()];
    }

    /** Fills {@code batch} (cleared first) from {@code running}; returns the kind, or null if nothing runs. */
    Kind plan(List<Session> running, Batch batch) { return plan(running, batch, Integer.MAX_VALUE); }

    /**
     * As {@link #plan(List, Batch)}, with at most {@code maxSessions} sessions, leaving out those in
     * flight on a route (their next row needs the token they await): a head's micro-batch.
     */
    Kind plan(List<Session> running, Batch batch, int maxSessions) {
        batch.clear();
        count = prefillCount = decodeCount = tokens = 0;
        if (maxSessions <= 0) return null;
        int nPrefill = 0;
        int nDecode = 0;
        int maxPrefillWait = -1;
        boolean resumedPrefill = false;
        for (int i = 0; i < running.size(); i++) {
            Session s = running.get(i);
            if (s.inFlight != null) continue;
            if (s.inPrefill()) {
                insertByWait(s, nPrefill++);
                maxPrefillWait = Math.max(maxPrefillWait, s.waitedIterations);
                resumedPrefill |= s.resumed;
            } else {
                nDecode++;
            }
        }
        Kind kind;
        if (nPrefill == 0 && nDecode == 0) return null;
        if (mixes) kind = Kind.MIXED;
        else if (nPrefill == 0) kind = Kind.DECODE;
        else if (nDecode == 0) kind = Kind.PREFILL;
        else if (decodeWaited >= config.maxDecodeWaitIterations()) kind = Kind.DECODE;
        else if (resumedPrefill || maxPrefillWait >= config.maxPrefillWaitIterations()) kind = Kind.PREFILL;
        else kind = Kind.DECODE;

        int limit = Math.min(maxSessions, sessions.length);
        if (kind != Kind.PREFILL) {
            for (int i = 0; i < running.size() && count < limit; i++) {
                Session s = running.get(i);
                if (!s.inPrefill() && s.inFlight == null) addDecode(s, batch);
            }
        }
        if (kind != Kind.DECODE) {
            for (int i = 0; i < nPrefill && count < limit; i++) {
                int budget = config.maxBatchTokens() - tokens;
                if (budget == 0) break;
                addPrefill(prefillOrder[i], Math.min(budget, config.maxPrefillChunk()), batch);
            }
        }
        decodeWaited = (nDecode > 0 && decodeCount == 0) ? decodeWaited + 1 : 0;
        for (int i = 0; i < nPrefill; i++) prefillOrder[i] = null;
        return kind;
    }

    /** Insertion into {@code prefillOrder[0..n]}: longest wait first, then earlier sequence id. */
    private void insertByWait(Session s, int n) {
        int i = n;
        while (i > 0 && waitsLonger(s, prefillOrder[i - 1])) {
            prefillOrder[i] = prefillOrder[i - 1];
            i--;
        }
        prefillOrder[i] = s;
    }

    private static boolean waitsLonger(Session a, Session b) {
        if (a.waitedIterations != b.waitedIterations) return a.waitedIterations > b.waitedIterations;
        return a.sequenceId() < b.sequenceId();
    }

    private void addDecode(Session s, Batch batch) {
        int row = batch.addToken(s.slot, s.position(), s.lastToken, true);
        record(s, 1, row);
        decodeCount++;
    }

    private void addPrefill(Session s, int maxChunk, Batch batch) {
        int start = s.promptProcessed;
        int chunk = Math.min(maxChunk, s.promptLength() - start);
        boolean last = start + chunk == s.promptLength();
        int row = -1;
        for (int i = 0; i < chunk; i++) {
            boolean wantOutput = last && i == chunk - 1;
            row = batch.addToken(s.slot, start + i, s.promptToken(start + i), wantOutput);
        }
        record(s, chunk, row);
        prefillCount++;
    }

    private void record(Session s, int chunk, int lastRow) {
        sessions[count] = s;
        chunks[count] = chunk;
        outputRows[count] = lastRow;
        count++;
        tokens += chunk;
    }

    int count() { return count; }

    Session session(int i) { return sessions[i]; }

    long sequenceId(int i) { return sessions[i].sequenceId(); }

    /** Tokens of session {@code i} in this batch (1 for a decode row). */
    int chunk(int i) { return chunks[i]; }

    /** The batch row whose output belongs to session {@code i} (its last row). */
    int outputRow(int i) { return outputRows[i]; }

    int prefillCount() { return prefillCount; }

    /** The sequence ids of the decode rows, or of the prefill chunks, of this batch. */
    long[] sequenceIds(boolean decode) {
        // Planner order: decode rows first, then prefill chunks (chunk sizes alone cannot tell a
        // one-token chunk from a decode row).
        int from = decode ? 0 : decodeCount;
        int n = decode ? decodeCount : prefillCount;
        if (n == 0) return NO_IDS;
        long[] ids = new long[n];
        for (int i = 0; i < n; i++) ids[i] = sessions[from + i].sequenceId();
        return ids;
    }

    int decodeCount() { return decodeCount; }

    int tokens() { return tokens; }

    /** Drops references to sessions so finished ones can be collected. */
    void release() {
        for (int i = 0; i < count; i++) sessions[i] = null;
    }
}
