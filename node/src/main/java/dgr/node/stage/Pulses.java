package dgr.node.stage;

import dgr.node.stage.wire.Pulse;
import dgr.node.stage.wire.Up;
import java.util.Collection;
import java.util.concurrent.locks.LockSupport;

/**
 * A stage's pulses: every {@link #EVERY_NANOS}, a {@code Pulse} on each upstream stream that carried
 * nothing else for that long, sent from this thread, not the stage's loop. A stage computing a long
 * batch (a replay, a prompt chunk on a slow host) still pulses; a suspended one ({@code kill -STOP}) or
 * a stalled process does not. The upstream side tells the two apart by that silence
 * ({@link StepClock#silentAfter}) instead of by a reply's deadline, which has to allow for four slow
 * batches: a hung middle stage of a 3-stage llama-1b route at c=8 was declared 1.1-1.5 s after the
 * signal from its deadline (250 ms + 4 × 25-34 ms per row × 8 rows) on a slow host.
 */
final class Pulses implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(Pulses.class.getName());
    /** How often a quiet stream gets a pulse. */
    static final long EVERY_NANOS = 100_000_000L;

    private final Collection<UpLink> ups;
    private final Up pulse = Up.newBuilder().setPulse(Pulse.newBuilder().setEveryMillis((int) (EVERY_NANOS / 1_000_000))).build();
    private final Thread thread;
    private volatile boolean closed;

    /** Starts pulsing on the streams {@code ups} holds (a concurrent collection the stage keeps current). */
    Pulses(Collection<UpLink> ups, String name) {
        this.ups = ups;
        this.thread = Thread.ofPlatform().daemon(true).name(name).start(this::loop);
    }

    private void loop() {
        while (!closed) {
            long now = System.nanoTime();
            try {
                for (UpLink link : ups) link.pulse(pulse, now, EVERY_NANOS);
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.ERROR, "stage pulse failed", e);  // the next round tries again
            }
            // Looking twice per period keeps a stream's longest quiet under 1.5 periods.
            LockSupport.parkNanos(this, EVERY_NANOS / 2);
        }
    }

    @Override
    public void close() {
        closed = true;
        LockSupport.unpark(thread);
    }
}
