package dgr.node.stage;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** A stage loop's turns ({@link LoopTurn}): inline when idle, one at a time, nothing queued left behind. */
class LoopTurnTest {
    private static final Duration WAIT = Duration.ofSeconds(10);

    @Test
    void workReachingAnIdleLoopRunsOnTheThreadThatBroughtIt() {
        AtomicReference<Thread> ranOn = new AtomicReference<>();
        try (LoopTurn turn = new LoopTurn("test-loop", 10_000, 0, () -> { if (ranOn.get() == null) ranOn.set(Thread.currentThread()); })) {
            turn.arrived(true);
            assertThat(ranOn.get()).isSameAs(Thread.currentThread());
        }
    }

    @Test
    void workArrivingRightAfterAnInlineTurnGoesToTheLoopsThread() {
        List<String> ranOn = java.util.Collections.synchronizedList(new ArrayList<>());
        // An hour counts as "right after": the second arrival is back to back whatever the machine's load.
        try (LoopTurn turn = new LoopTurn("test-loop", 10_000, TimeUnit.HOURS.toNanos(1), () -> ranOn.add(Thread.currentThread().getName()))) {
            turn.arrived(true);
            turn.arrived(true);
            Await.until(WAIT, "the second turn ran", () -> ranOn.size() >= 2);
            assertThat(ranOn.get(0)).isEqualTo(Thread.currentThread().getName());
            assertThat(ranOn.get(1)).isEqualTo("test-loop");
        }
    }

    @Test
    void workThatFindsTheLoopBusyIsNotBlockedAndIsDoneInOrderByAnotherThreadsTurn() throws Exception {
        ConcurrentLinkedQueue<String> queued = new ConcurrentLinkedQueue<>();
        List<String> done = java.util.Collections.synchronizedList(new ArrayList<>());
        List<String> threads = java.util.Collections.synchronizedList(new ArrayList<>());
        CountDownLatch inBody = new CountDownLatch(1), release = new CountDownLatch(1);
        try (LoopTurn turn = new LoopTurn("test-loop", 10_000, 0, () -> {
            for (String w; (w = queued.poll()) != null; ) {
                threads.add(Thread.currentThread().getName());
                if (w.equals("first")) {
                    inBody.countDown();
                    try {
                        release.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
                done.add(w);
            }
        })) {
            queued.add("first");
            Thread holder = Thread.ofPlatform().name("holder").start(() -> turn.arrived(true));
            assertThat(inBody.await(10, TimeUnit.SECONDS)).isTrue();
            queued.add("second");
            turn.arrived(true);  // returns at once: the body is taken
            assertThat(done).isEmpty();
            release.countDown();
            holder.join();
            Await.until(WAIT, "the second work item is done", () -> done.size() == 2);
            assertThat(done).containsExactly("first", "second");
            // The holder's turn (still draining) or the loop's thread did it; the caller that found the body taken did not.
            assertThat(threads).doesNotContain(Thread.currentThread().getName());
        }
    }

    @Test
    void turnsFromManyThreadsNeverOverlapAndLeaveNothingQueued() throws Exception {
        int threads = 4, each = 2000;
        ConcurrentLinkedQueue<Integer> queued = new ConcurrentLinkedQueue<>();
        AtomicInteger inside = new AtomicInteger(), overlaps = new AtomicInteger(), done = new AtomicInteger();
        try (LoopTurn turn = new LoopTurn("test-loop", 10_000, 0, () -> {
            if (inside.incrementAndGet() > 1) overlaps.incrementAndGet();
            while (queued.poll() != null) done.incrementAndGet();
            inside.decrementAndGet();
        })) {
            List<Thread> ts = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int id = t;
                ts.add(Thread.ofPlatform().start(() -> {
                    for (int i = 0; i < each; i++) {
                        queued.add(i);
                        turn.arrived((i + id) % 3 != 0);
                    }
                }));
            }
            for (Thread t : ts) t.join();
            // The loop's own tick is 10 s here: only a wake-up from arrived() can take up what is left.
            Await.until(WAIT, "every queued item is taken", () -> done.get() == threads * each);
            assertThat(overlaps.get()).isZero();
        }
    }

    @Test
    void noTurnRunsAfterClose() {
        AtomicInteger runs = new AtomicInteger();
        LoopTurn turn = new LoopTurn("test-loop", 1, 0, runs::incrementAndGet);
        turn.close();
        int after = runs.get();
        turn.arrived(true);
        turn.arrived(false);
        assertThat(runs.get()).isEqualTo(after);
    }
}
