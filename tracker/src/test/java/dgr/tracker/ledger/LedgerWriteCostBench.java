package dgr.tracker.ledger;

import dgr.tracker.ledger.LedgerDatabase.Kind;
import dgr.tracker.ledger.Settlement.Outcome;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A benchmark, not a test (it asserts nothing and is skipped unless asked for): the ledger's write cost per
 * request — reserve (open row + budget guard), first token, settle, each its own committed transaction, as
 * the front door runs them — on SQLite and a real PostgreSQL, one request at a time and 16 in flight.
 * Prints p50 / p99 / max in microseconds. Run:
 * <pre>mvn -B -q -pl tracker -am verify -Dtest=LedgerWriteCostBench -Dsurefire.failIfNoSpecifiedTests=false -Ddgr.bench=true</pre>
 */
@EnabledIfSystemProperty(named = "dgr.bench", matches = "true")
class LedgerWriteCostBench {
    @RegisterExtension
    static final TestDatabases DBS = new TestDatabases();

    private static final int WARMUP = 300;
    private static final int REQUESTS = 3000;

    @ParameterizedTest
    @EnumSource(Kind.class)
    void writeCostPerRequest(Kind kind) throws Exception {
        try (LedgerDatabase db = DBS.open(kind)) {
            JdbcLedger ledger = new JdbcLedger(db, new ApiKeyStore(db, Clock.systemUTC()), "bench");
            KeyHolder h = ledger.authenticate(new ApiKeyStore(db, Clock.systemUTC()).add("bench", Long.MAX_VALUE / 4).key())
                    .orElseThrow();
            run(ledger, h, "warm", WARMUP, 1);
            report(kind, "1 in flight", run(ledger, h, "seq", REQUESTS, 1));
            report(kind, "16 in flight", run(ledger, h, "par", REQUESTS, 16));
        }
    }

    private static long[] run(JdbcLedger ledger, KeyHolder h, String prefix, int n, int threads) throws Exception {
        long[] nanos = new long[n];
        try (ExecutorService pool = Executors.newFixedThreadPool(threads)) {
            List<Future<?>> fs = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int first = t;
                fs.add(pool.submit(() -> {
                    for (int i = first; i < n; i += threads) {
                        String id = prefix + "-" + i;
                        long t0 = System.nanoTime();
                        ledger.reserve(new RequestStart(id, h, "llama-tiny", 600, id, Instant.now()));
                        ledger.firstToken(id, Instant.now());
                        ledger.settle(new Settlement(id, "recipe", List.of("node-a"), 40, 0, 100, 100, 0, Outcome.STOP,
                                200, "{\"usage\":{}}", Instant.now()));
                        nanos[i] = System.nanoTime() - t0;
                    }
                    return null;
                }));
            }
            for (Future<?> f : fs) f.get();
        }
        return nanos;
    }

    private static void report(Kind kind, String load, long[] nanos) {
        long[] s = nanos.clone();
        Arrays.sort(s);
        System.out.printf("ledger write cost per request (reserve + first token + settle), %s, %s, %d requests: "
                        + "p50 %d us, p99 %d us, max %d us%n", kind, load, s.length, s[s.length / 2] / 1000,
                s[(int) (s.length * 0.99)] / 1000, s[s.length - 1] / 1000);
    }
}
