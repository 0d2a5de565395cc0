package dgr.runtime;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

/**
 * Per-tenant waiting queues and service counters, and the admission order built on them: the
 * waiting session of the tenant with the least service goes first (in the spirit of the virtual
 * token counter). Scheduler thread only, except the service snapshot.
 */
final class TenantLedger {
    static final class Tenant {
        final String id;
        /** Service the fairness order compares: real service, lifted when the tenant becomes active. */
        long counter;
        /** Real weighted service (what the fairness check measures). */
        volatile long served;
        final ArrayDeque<Session> waiting = new ArrayDeque<>();
        int running;

        Tenant(String id) { this.id = id; }

        boolean active() { return running > 0 || !waiting.isEmpty(); }
    }

    private final Map<String, Tenant> tenants = new HashMap<>();
    private final Map<String, Tenant> published = new ConcurrentHashMap<>();
    private final boolean fairness;
    private final int promptWeight;
    private final int generatedWeight;
    private int waitingCount;

    TenantLedger(boolean fairness, int promptWeight, int generatedWeight) {
        this.fairness = fairness;
        this.promptWeight = promptWeight;
        this.generatedWeight = generatedWeight;
    }

    void enqueue(Session s) {
        Tenant t = tenants.computeIfAbsent(s.tenant(), id -> {
            Tenant n = new Tenant(id);
            published.put(id, n);
            return n;
        });
        if (!t.active()) {
            // A tenant returning from idle must not spend much credit saved while it asked for
            // nothing: it starts at most one session's service below the least counter among the
            // tenants already competing. One session's worth, not zero, so a client that resubmits
            // the moment its session ends (and so was idle for an instant) keeps its place.
            long min = Long.MAX_VALUE;
            for (Tenant o : tenants.values()) if (o != t && o.active()) min = Math.min(min, o.counter);
            if (min != Long.MAX_VALUE) t.counter = Math.max(t.counter, min - maxService(s));
        }
        if (s.resumed) {
            // A resumed session goes before its tenant's fresh ones (after any resumed ones already there).
            ArrayDeque<Session> fresh = new ArrayDeque<>();
            while (!t.waiting.isEmpty() && !t.waiting.peekLast().resumed) fresh.addFirst(t.waiting.pollLast());
            t.waiting.addLast(s);
            t.waiting.addAll(fresh);
        } else {
            t.waiting.addLast(s);
        }
        waitingCount++;
    }

    private long maxService(Session s) {
        return (long) promptWeight * s.promptLength() + (long) generatedWeight * s.stopConditions().maxTokens();
    }

    /**
     * The next session to admit, or null: a resumed session first (its client is mid-stream), then least
     * counter first (fairness on) or arrival order (off).
     */
    Session peekNext() {
        Tenant best = null;
        for (Tenant t : tenants.values()) {
            Session head = t.waiting.peekFirst();
            if (head == null) continue;
            if (best == null || before(t, head, best, best.waiting.peekFirst())) best = t;
        }
        return best == null ? null : best.waiting.peekFirst();
    }

    private boolean before(Tenant a, Session headA, Tenant b, Session headB) {
        if (headA.resumed != headB.resumed) return headA.resumed;
        if (fairness && a.counter != b.counter) return a.counter < b.counter;
        return headA.sequenceId() < headB.sequenceId();
    }

    /** Moves {@code s} (the session {@link #peekNext} returned) from waiting to running. */
    void admit(Session s) {
        Tenant t = tenants.get(s.tenant());
        if (t.waiting.pollFirst() != s) throw new IllegalStateException("admitting a session that is not next");
        waitingCount--;
        t.running++;
    }

    /**
     * Takes {@code s} (the session {@link #peekNext} returned) out of waiting without running it: its
     * admission failed and it is about to end.
     */
    void dropNext(Session s) {
        Tenant t = tenants.get(s.tenant());
        if (t.waiting.pollFirst() != s) throw new IllegalStateException("dropping a session that is not next");
        waitingCount--;
    }

    void ended(Session s) {
        if (s.admitted) tenants.get(s.tenant()).running--;
    }

    /** Removes waiting sessions matching {@code drop}, passing each to {@code onRemoved}. */
    void removeWaiting(java.util.function.Predicate<Session> drop, Consumer<Session> onRemoved) {
        for (Tenant t : tenants.values()) {
            for (Iterator<Session> it = t.waiting.iterator(); it.hasNext(); ) {
                Session s = it.next();
                if (drop.test(s)) {
                    it.remove();
                    waitingCount--;
                    onRemoved.accept(s);
                }
            }
        }
    }

    void chargePrompt(Session s, int tokens) { charge(s, (long) promptWeight * tokens); }

    void chargeGenerated(Session s) { charge(s, generatedWeight); }

    private void charge(Session s, long units) {
        Tenant t = tenants.get(s.tenant());
        t.counter += units;
        t.served += units;
    }

    int waitingCount() { return waitingCount; }

    /** Real weighted service per tenant (safe from any thread). */
    Map<String, Long> serviceSnapshot() {
        Map<String, Long> out = new HashMap<>();
        published.forEach((id, t) -> out.put(id, t.served));
        return out;
    }
}
