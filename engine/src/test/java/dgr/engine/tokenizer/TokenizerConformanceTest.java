package dgr.engine.tokenizer;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.FieldSource;

/** Every case of llama.cpp's vocabulary test sets must give exactly llama.cpp's ids. */
class TokenizerConformanceTest {
    static final List<String> VOCABS = Fixtures.VOCABS;

    @ParameterizedTest
    @FieldSource("VOCABS")
    void everyCaseGivesLlamaCppIds(String vocab) throws IOException {
        Tokenizer tok = Fixtures.vocab(vocab);
        List<Fixtures.Case> cases = Fixtures.cases(vocab);
        assertThat(cases).hasSize(46);
        List<String> mismatches = new ArrayList<>();
        for (Fixtures.Case c : cases) {
            int[] got = tok.encode(c.text(), false, false);
            if (!Arrays.equals(got, c.expected())) {
                mismatches.add("case " + c.index() + " " + quote(c.text()) + "\n  expected " + Arrays.toString(c.expected())
                        + "\n  got      " + Arrays.toString(got));
            }
        }
        assertThat(mismatches).as(vocab).isEmpty();
    }

    @Test
    void llamaTinyPromptMatchesTheReferencePrompt() {
        Tokenizer tok = Fixtures.llamaTiny();
        assertThat(tok.vocabSize()).isEqualTo(1025);
        assertThat(tok.addBosByDefault()).isTrue();
        int[] ids = tok.encode("The quick brown fox jumps over the lazy dog. He said", tok.addBosByDefault(), false);
        assertThat(ids).containsExactly(1024, 464, 627, 624, 275, 305, 675, 277, 78, 87, 474, 388, 862, 625, 262, 300,
                64, 89, 88, 466, 70, 13, 679, 531);
    }

    static String quote(String s) {
        StringBuilder sb = new StringBuilder("\"");
        s.codePoints().forEach(cp -> {
            if (cp == '\n') sb.append("\\n");
            else if (cp == '\t') sb.append("\\t");
            else if (cp == '\r') sb.append("\\r");
            else sb.appendCodePoint(cp);
        });
        return sb.append('"').toString();
    }
}
