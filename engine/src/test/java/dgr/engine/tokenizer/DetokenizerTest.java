package dgr.engine.tokenizer;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.FieldSource;

class DetokenizerTest {
    static final List<String> VOCABS = Fixtures.VOCABS;

    /** Emoji (4-byte, ZWJ sequences), CJK (3-byte), Khmer and Cyrillic: characters that tokens split. */
    static final String MULTIBYTE = "🚀 (normal) 😶‍🌫️ ✅ 🦙🦙 我想在apple工作1314151天～ កាន់តែពិសេសអាច нещо на Български Cửa Việt";

    @ParameterizedTest
    @FieldSource("VOCABS")
    void decodeOfEncodeGivesBackEveryConformanceInput(String vocab) throws IOException {
        Tokenizer tok = Fixtures.vocab(vocab);
        List<String> failures = new ArrayList<>();
        for (Fixtures.Case c : Fixtures.cases(vocab)) {
            String back = tok.decode(tok.encode(c.text(), false, false));
            if (!back.equals(c.text())) {
                failures.add("case " + c.index() + ": " + TokenizerConformanceTest.quote(c.text()) + " -> "
                        + TokenizerConformanceTest.quote(back));
            }
        }
        assertThat(failures).isEmpty();
    }

    @ParameterizedTest
    @FieldSource("VOCABS")
    void streamingNeverEmitsReplacementCharactersForValidText(String vocab) {
        assertStreamsCleanly(Fixtures.vocab(vocab));
    }

    @Test
    void streamingHoldsBackBytesOfASplitCharacterInATinyByteLevelVocab() {
        // llama-tiny's 1024 tokens hold no multi-byte character whole: every emoji arrives byte by byte.
        Tokenizer tok = Fixtures.llamaTiny();
        List<String> chunks = assertStreamsCleanly(tok);
        assertThat(chunks).contains("");
        assertThat(chunks).contains("🚀");
    }

    @Test
    void sentencePieceByteTokensAreReassembledIntoOneCharacter() {
        Tokenizer tok = Fixtures.vocab("llama-spm");
        int[] ids = tok.encode("🦙", false, false);
        // ▁ then four byte-fallback tokens <0xF0><0x9F><0xA6><0x99>
        assertThat(ids).hasSize(5);
        Detokenizer d = tok.detokenizer();
        List<String> chunks = new ArrayList<>();
        for (int id : ids) chunks.add(d.push(id));
        assertThat(chunks).containsExactly(" ", "", "", "", "🦙");
        assertThat(d.flush()).isEmpty();
    }

    @Test
    void flushTurnsAnUnfinishedCharacterIntoOneReplacementCharacter() {
        Tokenizer tok = Fixtures.llamaTiny();
        int[] ids = tok.encode("€", false, false); // E2 82 AC: three byte tokens
        assertThat(ids).hasSize(3);
        Detokenizer d = tok.detokenizer();
        assertThat(d.push(ids[0]) + d.push(ids[1])).isEmpty();
        assertThat(d.flush()).isEqualTo("\uFFFD");
    }

    @Test
    void controlTokensAreSilentUnlessRenderingSpecialTokens() {
        Tokenizer tok = Fixtures.vocab("qwen2");
        int[] ids = tok.encode("<|im_start|>user\nhi<|im_end|>", false, true);
        Detokenizer plain = tok.detokenizer();
        Detokenizer special = tok.detokenizerWithSpecialTokens();
        StringBuilder a = new StringBuilder(), b = new StringBuilder();
        for (int id : ids) {
            a.append(plain.push(id));
            b.append(special.push(id));
        }
        assertThat(a.toString()).isEqualTo("user\nhi");
        assertThat(b.toString()).isEqualTo("<|im_start|>user\nhi<|im_end|>");
    }

    @Test
    void aGeneratedContinuationKeepsItsLeadingSpace() {
        Tokenizer tok = Fixtures.vocab("llama-spm");
        int[] ids = tok.encode("Hello world", false, false);
        Detokenizer d = tok.detokenizer();
        StringBuilder sb = new StringBuilder();
        for (int id : ids) sb.append(d.push(id));
        assertThat(sb.toString()).isEqualTo(" Hello world");
        assertThat(tok.decode(ids)).isEqualTo("Hello world");
    }

    private static List<String> assertStreamsCleanly(Tokenizer tok) {
        int[] ids = tok.encode(MULTIBYTE, false, false);
        Detokenizer d = tok.detokenizer();
        List<String> chunks = new ArrayList<>();
        StringBuilder all = new StringBuilder();
        for (int id : ids) {
            String chunk = d.push(id);
            assertThat(chunk).as("chunk after token %d", id).doesNotContain("\uFFFD");
            assertThat(chunk.isEmpty() || !Character.isHighSurrogate(chunk.charAt(chunk.length() - 1))).isTrue();
            chunks.add(chunk);
            all.append(chunk);
        }
        all.append(d.flush());
        String expected = tok.model() == Tokenizer.Model.SENTENCEPIECE ? " " + MULTIBYTE : MULTIBYTE;
        assertThat(all.toString()).isEqualTo(expected);
        return chunks;
    }
}
