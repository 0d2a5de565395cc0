package dgr.node.stage;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * DESIGN.md contract 1 across processes' wire: a session's tokens through a route of real gRPC
 * stages on 127.0.0.1 are the tokens of the whole model on one scheduler, bit for bit, greedy and
 * seeded, alone and among 8 concurrent sessions, for 2 and 3 stages at every split point.
 */
class StageRouteTest {
    static final int MAX_TOKENS = 10;
    static final int[] EIGHT = IntStream.range(0, 8).toArray();

    @ParameterizedTest(name = "{0} split {1}")
    @CsvSource({"llama, 1", "llama, 2", "llama, 3", "llama, 1:2", "llama, 1:3", "llama, 2:3", "deepseek4, 1", "deepseek4, 2:3"})
    void routeTokensEqualOneNodeAloneAndAmongEightSessions(String arch, String split) throws Exception {
        Path model = arch.equals("llama") ? StageFixture.llamaTiny4() : StageFixture.dsv4Tiny();
        int[] splits = java.util.Arrays.stream(split.split(":")).mapToInt(Integer::parseInt).toArray();
        List<List<Integer>> reference = StageFixture.single(model, EIGHT, MAX_TOKENS);
        try (var route = new StageFixture.Route(model, splits, Duration.ofSeconds(5))) {
            // Alone: one greedy and one seeded session, each on its own.
            assertThat(route.run(new int[] {0}, MAX_TOKENS)).containsExactly(reference.get(0));
            assertThat(route.run(new int[] {5}, MAX_TOKENS)).containsExactly(reference.get(5));
            // Among 8 concurrent sessions with prompts of 3 to 38 tokens.
            assertThat(route.run(EIGHT, MAX_TOKENS)).isEqualTo(reference);
            // Micro-batches: the head split the 8 sessions into groups and kept several on the route at once.
            assertThat(route.downstream.peakFlights()).isBetween(2, splits.length + 1);
            // Every stage freed every session's state once they finished.
            for (StageServer s : route.stages) {
                Await.until(Duration.ofSeconds(5), "stage sessions freed", () -> s.stats().sessions() == 0);
            }
        }
    }

    @org.junit.jupiter.api.Test
    void aRouteOfDepthOneKeepsOneMicroBatchOnItAndGivesTheSameTokens() throws Exception {
        // --route-depth 1: stages that share one machine's cores compute in turn, each with all of them.
        Path model = StageFixture.llamaTiny4();
        List<List<Integer>> reference = StageFixture.single(model, EIGHT, MAX_TOKENS);
        try (var route = new StageFixture.Route(model, new int[] {1, 3}, Duration.ofSeconds(5), 1)) {
            assertThat(route.downstream.depth()).isEqualTo(1);
            assertThat(route.run(EIGHT, MAX_TOKENS)).isEqualTo(reference);
            assertThat(route.downstream.peakFlights()).isEqualTo(1);
            // Per-hop latency (one clock: one JVM): each later stage measured its incoming hop's decode rows,
            // the head the tokens' way back; transits, not clock readings or zeros.
            for (StageServer st : route.stages) assertThat(st.stats().rowTransitP50()).isBetween(1L, Duration.ofSeconds(20).toNanos());
            assertThat(route.downstream.tokenTransitP50()).isBetween(1L, Duration.ofSeconds(20).toNanos());
        }
    }

    @org.junit.jupiter.api.Test
    void aLogitBiasTravelsToTheLastStageAndSamplesThereAsOnOneNode() throws Exception {
        Path model = StageFixture.llamaTiny4();
        int[] ids = {2, 3};
        List<List<Integer>> plain = StageFixture.single(model, ids, MAX_TOKENS);
        try (var e = dgr.engine.Engines.load(model, StageFixture.options());
             var one = new dgr.runtime.Scheduler(e, dgr.runtime.SchedulerConfig.defaults().withBatch(16, 64))) {
            int vocab = e.info().vocabSize();
            // Ban the first token each session chose without a bias and favour another one.
            java.util.function.IntFunction<dgr.engine.sampler.TokenSampler> biased = id -> {
                int banned = plain.get(id - 2).getFirst();
                var config = id % 2 == 0 ? dgr.engine.sampler.SamplerConfig.greedy()
                        : new dgr.engine.sampler.SamplerConfig(0.9f, 0, 0.95f, 0f, 1f, 0.2f, 0.1f, 64, 1000 + id);
                var bias = dgr.engine.sampler.LogitBias.of(java.util.Map.of(banned, Float.NEGATIVE_INFINITY, (banned + 7) % vocab, 2.5f));
                return new dgr.engine.sampler.Sampler(config, bias, vocab);
            };
            one.start();
            List<List<Integer>> oneNode = StageFixture.run(one, ids, MAX_TOKENS, biased);
            assertThat(oneNode.get(0).getFirst()).isNotEqualTo(plain.get(0).getFirst());
            try (var route = new StageFixture.Route(model, new int[] {2}, Duration.ofSeconds(5))) {
                assertThat(StageFixture.run(route.scheduler, ids, MAX_TOKENS, biased)).isEqualTo(oneNode);
            }
        }
    }

    @org.junit.jupiter.api.Test
    void cancellingAtTheHeadTravelsDownTheRouteAndFreesEveryStagesState() throws Exception {
        try (var route = new StageFixture.Route(StageFixture.llamaTiny4(), new int[] {1, 3}, Duration.ofMinutes(5))) {
            var stream = new dgr.runtime.TokenStream();
            var req = new dgr.runtime.SessionRequest("t", StageFixture.prompt(3), StageFixture.sampler(3, route.head.info().vocabSize()),
                    dgr.runtime.StopConditions.maxTokens(1500), null, null, stream);
            var session = ((dgr.runtime.Submission.Accepted) route.scheduler.submit(req)).session();
            for (int i = 0; i < 3; i++) assertThat(stream.take()).isInstanceOf(dgr.runtime.SessionEvent.TokenEvent.class);
            for (StageServer s : route.stages) Await.until(Duration.ofSeconds(5), "the session open on every stage", () -> s.stats().sessions() == 1);
            session.cancel("client disconnected");
            assertThat(session.completion().get(10, java.util.concurrent.TimeUnit.SECONDS).reason()).isEqualTo(dgr.runtime.FinishReason.CANCELLED);
            // The orphan grace is 5 minutes here: only the cancel travelling down can free them this soon.
            for (StageServer s : route.stages) {
                Await.until(Duration.ofSeconds(5), "stage sessions freed by the cancel", () -> s.stats().sessions() == 0 && s.stats().stateBytes() == 0);
            }
            assertThat(route.downstream.keptBytes()).isZero();
        }
    }
}
