package dgr.node.accounting;

import dgr.runtime.Session;
import dgr.runtime.SessionEvent;
import java.time.Clock;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The node's accounting of the requests a tracker sent it, by the tracker's request id: those running
 * and the most recently finished ones ({@link #capacity} of them, oldest dropped first). A tracker that
 * crashed with streams in flight asks for them on restart ({@code POST /v1/accounting}) and settles its
 * open reservations at exactly what this node computed, cut streams included.
 *
 * <p>A request id seen again replaces the earlier entry (a tracker resumes a stream on another node, so
 * one id on one node is one session). Requests without a request id (clients talking to the node
 * directly) are not kept.
 *
 * <p>With a journal ({@link #durable}), every finished record is also appended to an {@link AccountingJournal}
 * and forced to the disk before the request's final chunk leaves the node, and a restarted node starts from
 * the records the journal held: a node {@code kill -9}ed before a restarted tracker asked it still answers.
 */
public final class RecentRequests implements AutoCloseable {
    /** Finished requests kept by default: several minutes of a busy node's traffic. */
    public static final int DEFAULT_CAPACITY = 50_000;

    private final int capacity;
    private final Clock clock;
    private final Map<String, Tracked> running = new ConcurrentHashMap<>();
    private final LinkedHashMap<String, RequestRecord> finished = new LinkedHashMap<>();
    /** Where finished records go before the final chunk, or null: kept in memory only. */
    private final AccountingJournal journal;
    /** Cut streams end on the scheduler's thread: their record is forced to the disk off it. */
    private final java.util.concurrent.ExecutorService writer = java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor();

    /** Kept in memory only: lost with the process. */
    public RecentRequests(int capacity, Clock clock) {
        this(capacity, clock, null, java.util.List.of());
    }

    private RecentRequests(int capacity, Clock clock, AccountingJournal journal, java.util.List<RequestRecord> loaded) {
        if (capacity < 1) throw new IllegalArgumentException("capacity must be >= 1");
        this.capacity = capacity;
        this.clock = clock;
        this.journal = journal;
        for (RequestRecord r : loaded) finished.put(r.requestId(), r);
        while (finished.size() > capacity) finished.pollFirstEntry();
    }

    /** Kept in memory and in the journal at {@code file}, starting from the records it holds (a restart). */
    public static RecentRequests durable(java.nio.file.Path file, int capacity, Clock clock) throws java.io.IOException {
        AccountingJournal.Loaded l = AccountingJournal.open(file, capacity);
        return new RecentRequests(capacity, clock, l.journal(), l.records());
    }

    /** The journal's file, or null when the accounting is kept in memory only. */
    public java.nio.file.Path journalFile() { return journal == null ? null : journal.file(); }

    /** Finished records held (reloaded ones included). */
    public int finishedCount() {
        synchronized (finished) {
            return finished.size();
        }
    }

    /**
     * Starts tracking a request's session; returns the handle the request path counts delivered tokens on,
     * or {@link Tracked#NONE} when the request carries no id.
     */
    public Tracked track(String requestId, String model, String tenant, Session session) {
        return trackResumed(requestId, model, tenant, session, -1, 0);
    }

    /**
     * Tracks a session resumed from another node's stream: its prompt is the request's prompt
     * ({@code ownPrompt} tokens) followed by the {@code resumedTokens} already generated and delivered. The
     * record reads as the request's usage (as the node's usage chunk does): prompt at most {@code ownPrompt},
     * generated and delivered counting the resumed tokens, and every prompt token this node processed again
     * as recomputed.
     */
    public Tracked trackResumed(String requestId, String model, String tenant, Session session, int ownPrompt,
                                int resumedTokens) {
        if (requestId == null || requestId.isBlank()) return Tracked.NONE;
        Tracked t = new Tracked(this, requestId, model, tenant, clock.millis(), session, ownPrompt, resumedTokens);
        running.put(requestId, t);
        return t;
    }

    /** What this node knows of a request: its record if finished, a running snapshot, or empty. */
    public Optional<RequestRecord> find(String requestId) {
        synchronized (finished) {
            RequestRecord r = finished.get(requestId);
            if (r != null) return Optional.of(r);
        }
        Tracked t = running.get(requestId);
        return t == null ? Optional.empty() : Optional.of(t.snapshot());
    }

    private void finish(Tracked t, SessionEvent.Finished f) {
        RequestRecord r = t.record(f.accounting(),
                f.reason().wireName(), f.message() == null || f.message().isEmpty() ? null : f.message(), clock.millis());
        synchronized (finished) {
            finished.remove(t.requestId);
            finished.put(t.requestId, r);
            while (finished.size() > capacity) finished.pollFirstEntry();
        }
        if (journal != null) {
            try {
                journal.append(r, () -> {
                    synchronized (finished) {
                        return new ArrayList<>(finished.values());
                    }
                });
            } catch (java.io.UncheckedIOException e) {
                // The record stays in memory; only its survival of a crash is lost. Said once per failure.
                System.getLogger(RecentRequests.class.getName()).log(System.Logger.Level.ERROR, e.getMessage());
            }
        }
        running.remove(t.requestId, t);
    }

    @Override
    public void close() {
        writer.close();
        if (journal != null) journal.close();
    }

    /** One tracked request: the request path counts delivered tokens, then ends it once nothing more is written. */
    public static final class Tracked {
        /** The handle of a request without an id: counts nothing. */
        public static final Tracked NONE = new Tracked(null, null, null, null, 0, null, -1, 0);

        private final RecentRequests owner;
        private final String requestId;
        private final String model;
        private final String tenant;
        private final long startedMs;
        private final Session session;
        private final AtomicInteger delivered = new AtomicInteger();
        private final java.util.concurrent.atomic.AtomicBoolean recorded = new java.util.concurrent.atomic.AtomicBoolean();
        /** The request's own prompt length when resumed, else -1. */
        private final int ownPrompt;
        private final int resumedTokens;

        private Tracked(RecentRequests owner, String requestId, String model, String tenant, long startedMs,
                        Session session, int ownPrompt, int resumedTokens) {
            this.ownPrompt = ownPrompt;
            this.resumedTokens = resumedTokens;
            this.owner = owner;
            this.requestId = requestId;
            this.model = model;
            this.tenant = tenant;
            this.startedMs = startedMs;
            this.session = session;
        }

        /** {@code n} more tokens reached the client (written and flushed). */
        public void delivered(int n) {
            if (owner != null) delivered.addAndGet(n);
        }

        /**
         * The request wrote its last byte (or gave up): the record is kept once the session has ended, with
         * the session's exact accounting (a cancelled session's ends at the next scheduler iteration).
         */
        public void ended() {
            if (owner == null) return;
            session.completion().thenAcceptAsync(this::finished, owner.writer);
        }

        /**
         * The session ended with {@code f}: its record is kept (and, with a journal, forced to the disk) before
         * this returns, so the request path calls it before writing its final chunk. Once per request.
         */
        public void finished(SessionEvent.Finished f) {
            if (owner == null || !recorded.compareAndSet(false, true)) return;
            owner.finish(this, f);
        }

        RequestRecord snapshot() { return record(session.accounting(), null, null, -1); }

        /** The request's view of this session's accounting (a resumed session's counts its resumed tokens). */
        RequestRecord record(dgr.runtime.Accounting a, String finishReason, String message, long endedMs) {
            int processed = a.promptTokens();
            boolean resumed = ownPrompt >= 0;
            return new RequestRecord(requestId, model, tenant, resumed ? Math.min(processed, ownPrompt) : processed,
                    a.cachedTokens(), resumedTokens + a.generatedTokens(), resumedTokens + delivered.get(),
                    resumed ? processed : 0, finishReason, message, startedMs, endedMs);
        }
    }
}
