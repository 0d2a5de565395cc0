package dgr.node.stage;

import static org.assertj.core.api.Assertions.assertThat;

import dgr.node.stage.wire.Down;
import dgr.node.stage.wire.Open;
import dgr.node.stage.wire.StageGrpc;
import dgr.node.stage.wire.StageLoad;
import dgr.node.stage.wire.Tokens;
import dgr.node.stage.wire.Up;
import io.grpc.Server;
import io.grpc.ServerInterceptors;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 23, item 5: a stage that computes a long batch is told from a suspended one by its pulses. A
 * real gRPC stage on 127.0.0.1 takes rows and never answers them, its streams pulsed by the stage's own
 * {@link Pulses}; the upstream side ({@link Downlinks}, as on a head or a middle stage) waits as long as
 * the pulses come, and declares the stage hung for its silence once they stop, long before the replies'
 * own deadline (60 s here, as for a link that measured nothing yet).
 */
class PulseTest {
    private static final ClusterToken TOKEN = ClusterToken.of("pulse-test-token");
    /** The floor of the silence allowed (default 250 ms; a machine shared by builds can stall a process for longer). */
    private static final long FLOOR = 1_000_000_000L;
    private static final StepClock CLOCK = new StepClock(FLOOR, 4, 60_000_000_000L, 60_000_000_000L);
    private static final int WIDTH = 8;

    private final Set<UpLink> ups = ConcurrentHashMap.newKeySet();
    private Server stage;
    private Pulses pulses;
    private Downlinks down;
    private final AtomicReference<String> failure = new AtomicReference<>();
    private volatile long failedAt;

    @BeforeEach
    void start() throws Exception {
        pulses = new Pulses(ups, "pulse-test");
        // A stage that reads every message and answers none: its streams pulse once they carried something.
        var service = new StageGrpc.StageImplBase() {
            @Override
            public StreamObserver<Down> link(StreamObserver<Up> responses) {
                UpLink up = new UpLink(1, "test", responses);
                return new StreamObserver<>() {
                    @Override public void onNext(Down d) { ups.add(up); }
                    @Override public void onError(Throwable t) { ups.remove(up); }
                    @Override public void onCompleted() { ups.remove(up); up.complete(); }
                };
            }
        };
        stage = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                .addService(ServerInterceptors.intercept(service, TOKEN.interceptor())).build().start();
        down = new Downlinks(TOKEN, CLOCK, WIDTH, new Downlinks.Listener() {
            @Override public void tokens(Tokens reply) {}
            @Override public void load(StageLoad load) {}
            @Override public void failed(String address, String reason, List<String> sessions) {
                failedAt = System.nanoTime();
                failure.set(reason + " " + sessions);
            }
        });
    }

    @AfterEach
    void stop() throws InterruptedException {
        pulses.close();
        down.close();
        stage.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }

    @Test
    void aStageThatPulsesIsWaitedForAndOneThatFallsSilentIsDeclaredHungForItsSilence() {
        String address = "127.0.0.1:" + stage.getPort();
        down.open("s", address, Open.newBuilder().setSession("s").setProtocol(Wire.PROTOCOL).build());
        down.send("s", 0, new float[WIDTH], 0, 1, 0, false);
        down.flush();
        long sent = System.nanoTime();
        Await.until(Duration.ofSeconds(30), "the stage got the rows", () -> !ups.isEmpty());

        // Pulsing for three times the silence allowed (floor + 3 pulses) with the reply outstanding: still waited for.
        long allowed = CLOCK.silentAfter(0, Pulses.EVERY_NANOS);
        long until = sent + 3 * allowed;
        Await.until(Duration.ofSeconds(60), "three silences' time passed", () -> System.nanoTime() - until > 0 || failure.get() != null);
        assertThat(failure.get()).as("a pulsing stage declared hung").isNull();

        // Suspended: no pulse from now on. Declared hung for its silence, not before the allowance ran out.
        pulses.close();
        long quiet = System.nanoTime();
        Await.until(Duration.ofSeconds(30), "the silent stage was declared hung", () -> failure.get() != null);
        assertThat(failure.get()).startsWith("hung: silent for").contains("it pulses every 100 ms").endsWith("[s]");
        // Not before the floor and 3 periods after its last pulse, which came at most 1.5 periods before the
        // pulses stopped on a quiet machine (on a loaded one it may have come later than that: half the floor).
        assertThat(failedAt - quiet).as("nanoseconds from the pulses' end to the declaration").isGreaterThanOrEqualTo(FLOOR / 2);
    }
}
