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
            // Every stage freed every session's state once they finished.
            for (StageServer s : route.stages) {
                Await.until(Duration.ofSeconds(5), "stage sessions freed", () -> s.stats().sessions() == 0);
            }
        }
    }
}
