package dgr.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Two backlogged tenants, one with 1 client and one with 6, each client resubmitting as soon as its
 * session ends; the state budget holds only 2 sessions. Service is compared at the moment the
 * single client finished its 30th session.
 */
class FairnessTest {
    static final int PROMPT = 8;
    static final int MAX_TOKENS = 8;

    record Outcome(long serviceA, long serviceB, long bound) {}

    @Test
    void oneSessionTenantAndSixSessionTenantGetServiceWithinTheDocumentedBound() {
        Outcome o = run(true);
        assertThat(Math.abs(o.serviceA() - o.serviceB())).isLessThanOrEqualTo(o.bound());
    }

    @Test
    void withoutServiceCountersTheSixSessionTenantTakesFarMoreThanTheBound() {
        // Proves the check above can fail: arrival order alone gives the 6-client tenant ~6x.
        Outcome o = run(false);
        assertThat(o.serviceB() - o.serviceA()).isGreaterThan(o.bound());
    }

    private Outcome run(boolean fairness) {
        FakeEngine engine = new FakeEngine("fake", false, 64, 64, 512, 100, "f");
        long reservation = engine.stateLayout().bytesForTokens(PROMPT + MAX_TOKENS - 1);
        SchedulerConfig config = SchedulerConfig.defaults().withBatch(8, 64).withStateBudgetBytes(2 * reservation)
                .withFairness(fairness);
        SplittableRandom rnd = new SplittableRandom(3);
        AtomicInteger finishedA = new AtomicInteger();
        AtomicReference<Map<String, Long>> atMeasure = new AtomicReference<>();
        try (Scheduler scheduler = new Scheduler(engine, config)) {
            class Client {
                final String tenant;
                Client(String tenant) { this.tenant = tenant; }

                void submit() {
                    Runs.accepted(scheduler.submit(SessionRequest.of(tenant, Runs.prompt(rnd, PROMPT, 64), MAX_TOKENS)
                            .withListener(e -> {
                                if (e instanceof SessionEvent.Finished) onFinished();
                            })));
                }

                void onFinished() {
                    if (atMeasure.get() != null) return;
                    if (tenant.equals("A") && finishedA.incrementAndGet() == 30) {
                        atMeasure.set(scheduler.tenantService());
                        return;
                    }
                    submit();
                }
            }
            new Client("A").submit();
            for (int i = 0; i < 6; i++) new Client("B").submit();
            while (atMeasure.get() == null) scheduler.runIteration();
        }
        Map<String, Long> service = atMeasure.get();
        System.out.printf("fairness=%s: service A=%d B=%d bound=%d%n", fairness, service.get("A"), service.get("B"),
                config.fairnessBound(PROMPT, MAX_TOKENS, reservation));
        return new Outcome(service.get("A"), service.get("B"), config.fairnessBound(PROMPT, MAX_TOKENS, reservation));
    }
}
