package dgr.runtime;

import java.util.SplittableRandom;
import java.util.function.Supplier;

/** Helpers shared by the scheduler tests. */
final class Runs {
    private Runs() {}

    record Solo(Recorder recorder, SessionEvent.Finished finished) {}

    /** Runs one session alone on a fresh engine, stepping the scheduler on this thread. */
    static Solo solo(Supplier<? extends dgr.engine.Engine> engines, SchedulerConfig config, int[] prompt, int maxTokens) {
        try (var engine = engines.get(); var scheduler = new Scheduler(engine, config)) {
            Recorder rec = new Recorder();
            Session s = accepted(scheduler.submit(SessionRequest.of("solo", prompt, maxTokens).withSampler(rec)));
            while (!s.completion().isDone()) scheduler.runIteration();
            return new Solo(rec, s.completion().join());
        }
    }

    static Session accepted(Submission sub) {
        if (sub instanceof Submission.Accepted a) return a.session();
        throw new AssertionError("rejected: " + sub);
    }

    static int[] prompt(SplittableRandom rnd, int length, int vocab) {
        int[] p = new int[length];
        for (int i = 0; i < length; i++) p[i] = rnd.nextInt(vocab);
        return p;
    }
}
