package dgr.engine.tokenizer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.Test;

/**
 * The pre-tokenizers without a fixture vocabulary (SmolLM, Falcon, DeepSeek Coder, BLOOM, Viking,
 * tekken, GPT-4o, Seed-Coder, Bailing) against splits made by a second regex engine from
 * llama.cpp's regex lists ({@code tools/tokenizer/pretok_cases.py}, Python's {@code regex}
 * module): eight texts each, with case changes, contractions, digit runs, CJK, Hangul,
 * Devanagari, Arabic, emoji, CR LF and runs of spaces.
 */
class PreTokenizerCasesTest {

    static Stream<Arguments> cases() throws IOException {
        List<Arguments> out = new ArrayList<>();
        try (InputStream in = PreTokenizerCasesTest.class.getResourceAsStream("/tokenizer/pretokenizer-cases.tsv")) {
            for (String line : new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
                if (line.isEmpty()) continue;
                String[] f = line.split("\t", -1);
                List<String> words = Arrays.stream(f, 2, f.length).map(PreTokenizerCasesTest::unescape).toList();
                out.add(Arguments.of(f[0], unescape(f[1]), words));
            }
        }
        return out.stream();
    }

    @ParameterizedTest(name = "{0}: {1}")
    @MethodSource("cases")
    void splitsAsTheRegexListsSay(String pre, String text, List<String> words) {
        assertThat(PreTokenizer.forName(pre).split(text)).containsExactlyElementsOf(words);
    }

    @Test
    void aliasesShareTheirGroupsSplit() {
        String text = "I'M gonna parse CamelCaseXMLParser, 12345";
        for (String[] group : new String[][] {
                {"smollm", "starcoder", "refact", "command-r", "codeshell", "exaone", "minerva-7b"},
                {"gpt-4o", "llama4", "kanana2", "minimax-m2"},
                {"bloom", "poro-chat", "gpt3-finnish"},
                {"qwen2", "grok-2", "megrez"},
                {"deepseek-v3", "hunyuan-dense"}}) {
            List<String> first = PreTokenizer.forName(group[0]).split(text);
            for (String alias : group) assertThat(PreTokenizer.forName(alias).split(text)).as(alias).isEqualTo(first);
        }
    }

    @Test
    void tekkenLikeLlamaThreeTakesWholeWordTokensAndAddsBos() {
        assertThat(PreTokenizer.ignoresMerges("tekken")).isTrue();
        assertThat(PreTokenizer.ignoresMerges("smollm")).isFalse();
    }

    @Test
    void preTokenizersThatNeedLlamaCppsCustomCodeAreRefusedByName() {
        for (String pre : new String[] {"kimi-k2", "afmoe", "superbpe", "chameleon", "chatglm-bpe", "no-such-pre"}) {
            assertThatThrownBy(() -> PreTokenizer.forName(pre)).isInstanceOf(TokenizerException.class)
                    .hasMessageContaining("unsupported tokenizer.ggml.pre '" + pre + "'");
        }
    }

    /** The script's escapes: {@code \\}, {@code \t}, {@code \r}, {@code \n}, {@code \}{@code uXXXX}. */
    private static String unescape(String s) {
        StringBuilder b = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c != '\\') {
                b.append(c);
                continue;
            }
            char e = s.charAt(++i);
            switch (e) {
                case '\\' -> b.append('\\');
                case 't' -> b.append('\t');
                case 'r' -> b.append('\r');
                case 'n' -> b.append('\n');
                case 'u' -> {
                    b.append((char) Integer.parseInt(s.substring(i + 1, i + 5), 16));
                    i += 4;
                }
                default -> throw new IllegalArgumentException("bad escape \\" + e + " in " + s);
            }
        }
        return b.toString();
    }
}
