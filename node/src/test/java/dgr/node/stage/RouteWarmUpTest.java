package dgr.node.stage;

import static org.assertj.core.api.Assertions.assertThat;

import dgr.engine.Engine;
import dgr.engine.Engines;
import dgr.runtime.FinishReason;
import dgr.runtime.Scheduler;
import dgr.runtime.SchedulerConfig;
import dgr.runtime.SessionEvent;
import dgr.runtime.SessionRequest;
import dgr.runtime.StopConditions;
import dgr.runtime.Submission;
import dgr.runtime.TokenStream;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** A head started before its later stage, and a stage started again after it died: the head takes them when they come. */
class RouteWarmUpTest {
    private static final int MAX_TOKENS = 6;

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    private static StageServer stage(Engine e, int port) {
        return StageServer.start(e, new StageServer.Options("127.0.0.1", port, ClusterToken.of(StageFixture.TOKEN),
                StageFixture.PATIENT, Duration.ofMinutes(1)));
    }

    /** One session's end: its tokens, or null when it ended otherwise than by its length. */
    private static List<Integer> runOne(Scheduler scheduler, int vocab) throws InterruptedException {
        TokenStream stream = new TokenStream();
        var req = new SessionRequest("w", StageFixture.prompt(1), StageFixture.sampler(1, vocab), StopConditions.maxTokens(MAX_TOKENS),
                null, null, stream);
        if (!(scheduler.submit(req) instanceof Submission.Accepted)) throw new IllegalStateException("refused");
        List<Integer> tokens = new java.util.ArrayList<>();
        while (true) {
            SessionEvent e = stream.poll(60, TimeUnit.SECONDS);
            if (e == null) throw new IllegalStateException("no event in 60 s");
            if (e instanceof SessionEvent.TokenEvent t) tokens.add(t.tokenId());
            if (e instanceof SessionEvent.Finished f) return f.reason() == FinishReason.LENGTH ? tokens : null;
        }
    }

    @Test
    void aHeadStartedBeforeItsStageWaitsForItThenServesTheOneNodeTokensAndTakesBackAStageStartedAgain() throws Exception {
        Path model = StageFixture.llamaTiny4();
        List<Integer> oneNode = StageFixture.single(model, new int[] {1}, MAX_TOKENS).getFirst();
        int port = freePort();
        try (Engine head = Engines.load(model, StageFixture.options().withSpan(0, 2));
             Engine tail = Engines.load(model, StageFixture.options().withSpan(2, -1));
             Engine tailAgain = Engines.load(model, StageFixture.options().withSpan(2, -1));
             HeadDownstream route = new HeadDownstream(head, RouteSpec.parse("127.0.0.1:" + port), ClusterToken.of(StageFixture.TOKEN),
                     StageFixture.PATIENT);
             Scheduler scheduler = new Scheduler(head, SchedulerConfig.defaults().withBatch(16, 64), route)) {
            scheduler.start();
            int vocab = head.info().vocabSize();
            assertThat(route.waitingFor()).as("nothing listens on the stage port yet").contains("hop 1").contains("127.0.0.1:" + port);

            StageServer late = stage(tail, port);
            try {
                Await.until(Duration.ofSeconds(60), "the route to answer once its stage is up", () -> route.waitingFor() == null);
                assertThat(runOne(scheduler, vocab)).as("the one-node tokens").isEqualTo(oneNode);
            } finally {
                late.close();
            }
            // The only stage is gone: a session fails over to no one and ends; the address is marked dead.
            assertThat(runOne(scheduler, vocab)).as("no stage serves the span").isNull();
            StageServer again = stage(tailAgain, port);
            try {
                // A dead address is tried again a while after it failed: sessions are served once the stage is back.
                List<Integer>[] served = new List[1];
                Await.until(Duration.ofSeconds(60), "a session served by the stage started again", () -> {
                    try {
                        served[0] = runOne(scheduler, vocab);
                        return served[0] != null;
                    } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                });
                assertThat(served[0]).isEqualTo(oneNode);
            } finally {
                again.close();
            }
        }
    }
}
