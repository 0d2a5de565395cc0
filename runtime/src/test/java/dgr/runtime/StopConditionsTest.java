package dgr.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Stop strings, end-of-generation ids and the text the owner receives. */
class StopConditionsTest {
    /** Each token id decodes to one letter: 0 -> 'a', 1 -> 'b', ... */
    static final TextDecoder LETTERS = id -> String.valueOf((char) ('a' + id % 26));

    @Test
    void stopMatcherHoldsBackAPossibleStopPrefixAndNeverStreamsTheStopString() {
        StopMatcher m = new StopMatcher(List.of("END", "xy"));
        assertThat(m.push("abE")).isEqualTo("ab");
        assertThat(m.push("N")).isEmpty();
        assertThat(m.push("x")).isEqualTo("EN");
        assertThat(m.stopped()).isFalse();
        assertThat(m.push("y tail")).isEmpty();
        assertThat(m.stopped()).isTrue();
        StopMatcher other = new StopMatcher(List.of("END"));
        other.push("foE");
        assertThat(other.flush()).isEqualTo("E");
    }

    @Test
    void aStopStringEndsTheStreamWithReasonStopAndTheTextBeforeIt() {
        FakeEngine engine = FakeEngine.standard(false);
        // Learn what greedy generates for this prompt, then stop on the text of tokens 3..4.
        int[] prompt = {5, 6, 7};
        Runs.Solo solo = Runs.solo(() -> FakeEngine.standard(false), SchedulerConfig.defaults(), prompt, 10);
        StringBuilder full = new StringBuilder();
        for (int t : solo.recorder().tokens) full.append(LETTERS.push(t));
        String stop = full.substring(3, 5);
        int first = full.indexOf(stop);
        try (Scheduler scheduler = new Scheduler(engine, SchedulerConfig.defaults())) {
            List<SessionEvent> events = new ArrayList<>();
            Session s = Runs.accepted(scheduler.submit(SessionRequest.of("t", prompt, 10).withDecoder(LETTERS)
                    .withStop(StopConditions.maxTokens(10).withStopStrings(stop)).withListener(events::add)));
            while (!s.completion().isDone()) scheduler.runIteration();
            StringBuilder streamed = new StringBuilder();
            for (SessionEvent e : events) if (e instanceof SessionEvent.TokenEvent t) streamed.append(t.text());
            assertThat(streamed.toString()).isEqualTo(full.substring(0, first));
            var fin = s.completion().join();
            assertThat(fin.reason()).isEqualTo(FinishReason.STOP);
            assertThat(fin.accounting().generatedTokens()).isEqualTo(first + stop.length());
            assertThat(events.getLast()).isEqualTo(fin);
        }
    }

    @Test
    void anEndOfGenerationIdStopsWithReasonStopAndIsCountedButNotStreamedAsText() {
        int[] prompt = {9, 9, 1};
        Runs.Solo solo = Runs.solo(() -> FakeEngine.standard(true), SchedulerConfig.defaults(), prompt, 10);
        int eos = solo.recorder().tokens.get(4);
        int firstEos = solo.recorder().tokens.indexOf(eos);
        try (Scheduler scheduler = new Scheduler(FakeEngine.standard(true), SchedulerConfig.defaults())) {
            TokenStream stream = new TokenStream();
            Session s = Runs.accepted(scheduler.submit(SessionRequest.of("t", prompt, 10).withDecoder(LETTERS)
                    .withStop(StopConditions.maxTokens(10).withEndTokens(eos)).withListener(stream)));
            while (!s.completion().isDone()) scheduler.runIteration();
            List<SessionEvent.TokenEvent> tokens = new ArrayList<>();
            SessionEvent e;
            while ((e = stream.take()) instanceof SessionEvent.TokenEvent t) tokens.add(t);
            var fin = (SessionEvent.Finished) e;
            assertThat(fin.reason()).isEqualTo(FinishReason.STOP);
            assertThat(tokens).hasSize(firstEos + 1);
            assertThat(tokens.getLast().tokenId()).isEqualTo(eos);
            assertThat(tokens.getLast().text()).isEmpty();
            assertThat(tokens).extracting(SessionEvent.TokenEvent::index).containsExactlyElementsOf(
                    java.util.stream.IntStream.rangeClosed(0, firstEos).boxed().toList());
            assertThat(fin.accounting().generatedTokens()).isEqualTo(firstEos + 1);
        } catch (InterruptedException ex) {
            throw new AssertionError(ex);
        }
    }

    @Test
    void compatibilityKeysSeparatePhasesOnlyOnEnginesThatCannotMix() {
        var split = FakeEngine.standard(false);
        var mixed = FakeEngine.standard(true);
        assertThat(CompatibilityKey.of(split, Phase.PREFILL)).isNotEqualTo(CompatibilityKey.of(split, Phase.DECODE));
        assertThat(CompatibilityKey.of(mixed, Phase.PREFILL)).isEqualTo(CompatibilityKey.of(mixed, Phase.DECODE));
        assertThat(CompatibilityKey.of(split, Phase.DECODE)).isNotEqualTo(CompatibilityKey.of(mixed, Phase.DECODE));
        assertThat(CompatibilityKey.of(mixed, Phase.DECODE).toString()).contains("fake-mixed/1").contains("|mixed|");
    }
}
