package dgr.tracker.ledger;

import static org.assertj.core.api.Assertions.assertThat;

import dgr.tracker.ledger.LedgerDatabase.Kind;
import dgr.tracker.ledger.Settlement.Outcome;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Budgets under contention: 16 requests in flight at once, on one tracker and split across two trackers
 * (two pools, two ledgers) on one database. Each worker reserves, then settles at a random usage up to
 * what it reserved; afterwards the key's spent tokens equal the sum billed in the rows, nothing stays
 * held, and spent never passed the budget, which the reservations had to exhaust.
 */
class BudgetConcurrencyTest {
    @RegisterExtension
    static final TestDatabases DBS = new TestDatabases();

    private static final long BUDGET = 20_000;
    private static final int IN_FLIGHT = 16;
    private static final int ATTEMPTS_PER_WORKER = 30;

    @ParameterizedTest
    @EnumSource(Kind.class)
    void aBudgetIsNeverOvershotWith16RequestsInFlightOnOneTracker(Kind kind) throws Exception {
        String url = DBS.newUrl(kind);
        try (LedgerDatabase db = LedgerDatabase.open(url)) {
            JdbcLedger ledger = new JdbcLedger(db, new ApiKeyStore(db, Clock.systemUTC()), "t1");
            race(db, List.of(ledger));
        }
    }

    @ParameterizedTest
    @EnumSource(Kind.class)
    void aBudgetIsNeverOvershotAcrossTwoTrackersSharingTheDatabase(Kind kind) throws Exception {
        String url = DBS.newUrl(kind);
        try (LedgerDatabase a = LedgerDatabase.open(url); LedgerDatabase b = LedgerDatabase.open(url)) {
            race(a, List.of(new JdbcLedger(a, new ApiKeyStore(a, Clock.systemUTC()), "t1"),
                    new JdbcLedger(b, new ApiKeyStore(b, Clock.systemUTC()), "t2")));
        }
    }

    private static void race(LedgerDatabase db, List<JdbcLedger> trackers) throws Exception {
        ApiKeyStore keys = new ApiKeyStore(db, Clock.systemUTC());
        ApiKeyStore.NewKey key = keys.add("acme", BUDGET);
        KeyHolder holder = trackers.getFirst().authenticate(key.key()).orElseThrow();
        AtomicLong billed = new AtomicLong();
        AtomicLong refused = new AtomicLong();
        // Phase 1: everyone reserves and holds until refused: what was granted fits the budget, and the
        // refusals came only when the next reservation (at most 599 tokens) did not fit.
        AtomicLong granted = new AtomicLong();
        List<String> held = java.util.Collections.synchronizedList(new ArrayList<>());
        try (ExecutorService pool = Executors.newFixedThreadPool(IN_FLIGHT)) {
            List<Future<?>> workers = new ArrayList<>();
            for (int w = 0; w < IN_FLIGHT; w++) {
                JdbcLedger ledger = trackers.get(w % trackers.size());
                int worker = w;
                workers.add(pool.submit(() -> {
                    SplittableRandom rnd = new SplittableRandom(1000 + worker);
                    for (int i = 0; ; i++) {
                        String id = "hold-" + worker + "-" + i;
                        long reserve = 200 + rnd.nextInt(400);
                        try {
                            ledger.reserve(new RequestStart(id, holder, "m", reserve, id, Instant.now()));
                        } catch (BudgetExceededException e) {
                            return null;
                        }
                        granted.addAndGet(reserve);
                        held.add(id);
                    }
                }));
            }
            for (Future<?> f : workers) f.get();
        }
        assertThat(granted.get()).isLessThanOrEqualTo(BUDGET).isGreaterThan(BUDGET - 600);
        assertThat(keys.list().getFirst().reservedTokens()).isEqualTo(granted.get());
        for (String id : held) {
            trackers.getFirst().settle(new Settlement(id, "r", List.of("n"), 0, 0, 0, 0, 0, Outcome.FAILED, 500, null,
                    Instant.now()));
        }
        // Phase 2: reserve and settle at random usage, 16 at a time, until the budget is spent.
        try (ExecutorService pool = Executors.newFixedThreadPool(IN_FLIGHT)) {
            List<Future<?>> workers = new ArrayList<>();
            for (int w = 0; w < IN_FLIGHT; w++) {
                JdbcLedger ledger = trackers.get(w % trackers.size());
                int worker = w;
                workers.add(pool.submit(() -> {
                    SplittableRandom rnd = new SplittableRandom(worker);
                    for (int i = 0; i < ATTEMPTS_PER_WORKER; i++) {
                        String id = "w" + worker + "-" + i;
                        long reserve = 200 + rnd.nextInt(400);
                        try {
                            ledger.reserve(new RequestStart(id, holder, "m", reserve, id, Instant.now()));
                        } catch (BudgetExceededException e) {
                            refused.incrementAndGet();
                            continue;
                        }
                        long prompt = rnd.nextLong(reserve / 2 + 1);
                        long generated = rnd.nextLong(reserve - prompt + 1);
                        ledger.settle(new Settlement(id, "r", List.of("n"), prompt, 0, generated, generated, 0,
                                Outcome.STOP, 200, null, Instant.now()));
                        billed.addAndGet(prompt + generated);
                    }
                    return null;
                }));
            }
            for (Future<?> f : workers) f.get();
        }
        ApiKeyStore.KeyInfo info = keys.list().getFirst();
        assertThat(refused.get()).as("the budget ran out under contention").isPositive();
        assertThat(info.reservedTokens()).isZero();
        assertThat(info.spentTokens()).isEqualTo(billed.get()).isLessThanOrEqualTo(BUDGET);
        assertThat(new LedgerReports(db).usage("acme", null, null).total().promptTokens()
                + new LedgerReports(db).usage("acme", null, null).total().completionTokens()).isEqualTo(billed.get());
    }
}
