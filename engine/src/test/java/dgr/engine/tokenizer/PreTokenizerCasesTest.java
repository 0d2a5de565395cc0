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
 * tekken, GPT-4o, Seed-Coder, Bailing, Qwen 3.5, Jais 2, EXAONE MoE, Tiny Aya, Laguna) against splits made by a second regex engine from
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
    void preTokenizersThatNeedLlamaCppsCustomCodeAreRefusedByNameWithTheReason() {
        for (String pre : PreTokenizer.REFUSED.keySet()) {
            assertThatThrownBy(() -> PreTokenizer.forName(pre)).isInstanceOf(TokenizerException.class)
                    .hasMessageContaining("tokenizer.ggml.pre '" + pre + "' is not supported: " + PreTokenizer.REFUSED.get(pre));
        }
        assertThatThrownBy(() -> PreTokenizer.forName("no-such-pre")).isInstanceOf(TokenizerException.class)
                .hasMessageContaining("unknown tokenizer.ggml.pre 'no-such-pre'");
    }

    /**
     * Every name llama.cpp's llama-vocab.cpp maps (its whole list, read 2026-12; the first releases' names
     * are a subset) is either split here or refused by name: none falls through to "unknown".
     */
    @Test
    void everyNameLlamaCppKnowsIsSupportedOrRefusedByName() {
        String[] llamaCpp = {"default", "minicpm5", "llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral",
            "midm-2.0", "lfm2", "jina-v5-nano", "deepseek-llm", "deepseek-coder", "deepseek-v3", "youtu", "falcon", "mpt",
            "starcoder", "gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es", "jina-v2-de", "a.x-4.0", "mellum",
            "modern-bert", "jais-2", "gemma4", "granite-embed-multi-311m", "sarvam-moe", "jina-v1-en", "jina-v2-code",
            "roberta-bpe", "whitespace", "refact", "command-r", "qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2", "qwen35",
            "stablelm2", "olmo", "dbrx", "smaug-bpe", "poro-chat", "glm4", "chatglm-bpe", "viking", "jais", "tekken",
            "smollm", "codeshell", "bloom", "gpt3-finnish", "exaone", "exaone4", "exaone-moe", "chameleon", "minerva-7b",
            "megrez", "gpt-4o", "llama4", "kanana2", "talkie", "granite-embed-multi-97m", "tiny_aya", "cohere2moe",
            "superbpe", "trillion", "granite-docling", "bailingmoe", "bailingmoe2", "llada-moe", "seed-coder", "hunyuan",
            "hunyuan-dense", "joyai-llm", "kimi-k2", "grok-2", "afmoe", "laguna", "minimax-m2", "solar-open", "mellum2",
            "k2-horizon"};
        for (String pre : llamaCpp) {
            if (PreTokenizer.REFUSED.containsKey(pre)) {
                assertThatThrownBy(() -> PreTokenizer.forName(pre)).as(pre).hasMessageContaining("'" + pre + "' is not supported");
            } else {
                assertThat(PreTokenizer.forName(pre).split("Hello world 123")).as(pre).isNotEmpty();
            }
        }
    }

    @Test
    void glmFourVocabulariesHaveNoBosAsInLlamaCpp() {
        assertThat(PreTokenizer.hasNoBos("glm4")).isTrue();
        assertThat(PreTokenizer.hasNoBos("chatglm-bpe")).isTrue();
        assertThat(PreTokenizer.hasNoBos("llama-bpe")).isFalse();
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
