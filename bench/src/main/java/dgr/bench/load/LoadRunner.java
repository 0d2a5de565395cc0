package dgr.bench.load;

import dgr.bench.target.RequestRecord;
import dgr.bench.target.Target;
import dgr.bench.workload.RequestSpec;
import dgr.bench.workload.Workload;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * Drives one level against a target on virtual threads. The level's requests are drawn from the
 * workload before it starts, so which requests a level runs does not depend on thread timing.
 */
public final class LoadRunner {
    /**
     * @param probeEvery pause between probe requests; null = no probe client
     */
    public record Probe(RequestSpec template, java.time.Duration probeEvery) {}

    private final Target target;
    private final long origin;
    private final AtomicLong ids = new AtomicLong();
    private final PrintStream progressOut;

    public LoadRunner(Target target, long originNanos, PrintStream progressOut) {
        this.target = target;
        this.origin = originNanos;
        this.progressOut = progressOut;
    }

    /**
     * Runs {@code level}; {@code tenants.get(i)} is client i's tenant (open loop: request i goes to
     * tenant {@code i % size}). Returns every request of the level, probes included, in send order.
     */
    public List<RequestRecord> run(Level level, Workload workload, List<String> tenants, Probe probe, long seed)
            throws InterruptedException {
        List<RequestSpec> specs = new ArrayList<>(level.requests());
        for (int i = 0; i < level.requests(); i++) specs.add(workload.next());
        List<RequestRecord> out = Collections.synchronizedList(new ArrayList<>());
        Progress progress = new Progress(progressOut, level.label(), level.requests());
        long deadline = System.nanoTime() + level.duration().toNanos();
        AtomicInteger finishedLoad = new AtomicInteger();
        Thread probeThread = probe == null ? null : Thread.ofVirtual().name("bench-probe").start(() -> {
            try {
                while (finishedLoad.get() == 0) {
                    out.add(target.send(ids.getAndIncrement(), level.label(), "probe", -1, probe.template(), origin));
                    LockSupport.parkNanos(probe.probeEvery().toNanos());
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        try {
            if (level.closedLoop()) closed(level, specs, tenants, deadline, out, progress);
            else open(level, specs, tenants, deadline, out, progress, seed);
        } finally {
            finishedLoad.set(1);
            if (probeThread != null) probeThread.join();
            progress.finish();
        }
        List<RequestRecord> sorted = new ArrayList<>(out);
        sorted.sort((a, b) -> Long.compare(a.startNanos(), b.startNanos()));
        return sorted;
    }

    private void closed(Level level, List<RequestSpec> specs, List<String> tenants, long deadline,
                        List<RequestRecord> out, Progress progress) throws InterruptedException {
        AtomicInteger next = new AtomicInteger();
        List<Thread> clients = new ArrayList<>();
        for (int c = 0; c < level.concurrency(); c++) {
            int client = c;
            String tenant = tenants.get(c % tenants.size());
            clients.add(Thread.ofVirtual().name("bench-client-" + c).start(() -> {
                try {
                    int i;
                    while (System.nanoTime() < deadline && (i = next.getAndIncrement()) < specs.size()) {
                        out.add(target.send(ids.getAndIncrement(), level.label(), tenant, client, specs.get(i), origin));
                        progress.tick();
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }));
        }
        for (Thread t : clients) t.join();
    }

    private void open(Level level, List<RequestSpec> specs, List<String> tenants, long deadline,
                      List<RequestRecord> out, Progress progress, long seed) throws InterruptedException {
        // Poisson arrivals: exponential gaps with mean 1/rate, from the level's own seeded stream.
        SplittableRandom rnd = new SplittableRandom(seed ^ Double.doubleToLongBits(level.rate()));
        List<Thread> inFlight = new ArrayList<>();
        long at = System.nanoTime();
        for (int i = 0; i < specs.size(); i++) {
            long wait = at - System.nanoTime();
            if (wait > 0) LockSupport.parkNanos(wait);
            if (System.nanoTime() >= deadline) break;
            int k = i;
            String tenant = tenants.get(i % tenants.size());
            inFlight.add(Thread.ofVirtual().name("bench-request-" + i).start(() -> {
                try {
                    out.add(target.send(ids.getAndIncrement(), level.label(), tenant, k % tenants.size(), specs.get(k),
                            origin));
                    progress.tick();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }));
            at += (long) (-Math.log(1 - rnd.nextDouble()) / level.rate() * 1e9);
        }
        for (Thread t : inFlight) t.join();
    }
}
