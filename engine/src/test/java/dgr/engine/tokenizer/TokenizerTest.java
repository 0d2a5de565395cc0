package dgr.engine.tokenizer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dgr.gguf.GgufValueType;
import dgr.gguf.MetaValue;
import dgr.gguf.Metadata;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class TokenizerTest {

    @Test
    void spelledOutControlTokensAreTokensOnlyWhenParsingSpecials() {
        Tokenizer tok = Fixtures.vocab("qwen2");
        int imStart = tok.encode("<|im_start|>", false, true)[0];
        assertThat(tok.piece(imStart)).isEqualTo("<|im_start|>");
        assertThat(tok.type(imStart)).isEqualTo(TokenType.CONTROL);

        int[] parsed = tok.encode("<|im_start|>user\nHi<|im_end|>\n", false, true);
        assertThat(parsed[0]).isEqualTo(imStart);
        assertThat(parsed).hasSize(6); // <|im_start|> user \n Hi <|im_end|> \n
        int[] plain = tok.encode("<|im_start|>user", false, false);
        assertThat(plain).doesNotContain(imStart).hasSizeGreaterThan(2);
    }

    @Test
    void sentencePieceAddsItsDummySpaceAtTheStartAndAfterEachSpecialToken() {
        Tokenizer tok = Fixtures.vocab("llama-spm");
        int[] ids = tok.encode("Hi</s>Hi", true, true);
        int hi = tok.encode("Hi", false, false)[0];
        assertThat(tok.piece(hi)).isEqualTo("▁Hi");
        assertThat(ids).containsExactly(tok.bos(), hi, tok.eos().getAsInt(), hi);
    }

    @Test
    void llamaThreeAddsBosByDefaultAndEndsTurnsOnEotAsWellAsEos() {
        Tokenizer tok = Fixtures.vocab("llama-bpe");
        assertThat(tok.addBosByDefault()).isTrue();
        assertThat(tok.bos()).isEqualTo(128000);
        int eot = tok.encode("<|eot_id|>", false, true)[0];
        assertThat(tok.isEndOfGeneration(eot)).isTrue();
        assertThat(tok.isEndOfGeneration(tok.eos().getAsInt())).isTrue();
        assertThat(tok.isEndOfGeneration(tok.encode("Hello", false, false)[0])).isFalse();
        assertThat(tok.isEndOfGeneration(tok.bos())).isFalse();
    }

    @Test
    void chatMlEndOfTurnEndsGenerationEvenWhenEosIsEndOfText() {
        Tokenizer tok = Fixtures.vocab("qwen2");
        assertThat(tok.piece(tok.eos().getAsInt())).isEqualTo("<|endoftext|>");
        int imEnd = tok.encode("<|im_end|>", false, true)[0];
        assertThat(tok.isEndOfGeneration(imEnd)).isTrue();
        assertThat(tok.chatTemplate()).hasValueSatisfying(t -> assertThat(t).contains("<|im_start|>"));
    }

    @Test
    void vocabularyFactsComeFromMetadata() {
        Tokenizer spm = Fixtures.vocab("llama-spm");
        assertThat(spm.model()).isEqualTo(Tokenizer.Model.SENTENCEPIECE);
        assertThat(spm.vocabSize()).isEqualTo(32000);
        assertThat(spm.addBosByDefault()).isTrue();
        Tokenizer gpt2 = Fixtures.vocab("gpt-2");
        assertThat(gpt2.model()).isEqualTo(Tokenizer.Model.BYTE_LEVEL_BPE);
        assertThat(gpt2.preTokenizer()).isEqualTo("gpt-2");
        assertThat(gpt2.addBosByDefault()).isFalse();
        assertThat(gpt2.piece(gpt2.encode(" the", false, false)[0])).isEqualTo("Ġthe");
    }

    @Test
    void aLongWordIsTokenizedWithoutQuadraticMerging() {
        // 20k identical letters form one pre-tokenizer word: the merge loop sees 20k symbols at once.
        Tokenizer tok = Fixtures.vocab("llama-bpe");
        String text = "a".repeat(20_000);
        int[] ids = tok.encode(text, false, false);
        assertThat(tok.decode(ids)).isEqualTo(text);
        assertThat(ids.length).isLessThan(text.length() / 4);
    }

    @Test
    void unsupportedVocabularyKindsAreRejectedByName() {
        assertThatThrownBy(() -> Tokenizer.fromMetadata(metadata("bert", null)))
                .isInstanceOf(TokenizerException.class).hasMessageContaining("tokenizer.ggml.model 'bert'");
        assertThatThrownBy(() -> Tokenizer.fromMetadata(metadata("gpt2", "kimi-k2")))
                .isInstanceOf(TokenizerException.class).hasMessageContaining("tokenizer.ggml.pre 'kimi-k2'");
    }

    @Test
    void tokenIdsOutsideTheVocabularyAreRejected() {
        Map<String, MetaValue> m = new LinkedHashMap<>(metadata("gpt2", "gpt-2").asMap());
        m.put("tokenizer.ggml.eos_token_id", MetaValue.u32(99));
        assertThatThrownBy(() -> Tokenizer.fromMetadata(new Metadata(m)))
                .isInstanceOf(TokenizerException.class).hasMessageContaining("eos_token_id = 99");
        Tokenizer tok = Tokenizer.fromMetadata(metadata("gpt2", "gpt-2"));
        assertThatThrownBy(() -> tok.bos()).isInstanceOf(TokenizerException.class).hasMessageContaining("no BOS");
        assertThatThrownBy(() -> tok.detokenizer().push(7)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aHandMadeByteLevelVocabularyMergesByRank() {
        Tokenizer tok = Tokenizer.fromMetadata(metadata("gpt2", "gpt-2"));
        // merges: "a b" (rank 0) then "ab c" (rank 1); "b c" is no merge.
        assertThat(tok.encode("abc", false, false)).containsExactly(4);
        assertThat(tok.encode("cab", false, false)).containsExactly(2, 3);
        assertThat(tok.decode(new int[] {4, 2})).isEqualTo("abcc");
    }

    /** A five-token byte-level vocabulary: a, b, c, ab, abc. */
    private static Metadata metadata(String model, String pre) {
        Map<String, MetaValue> m = new LinkedHashMap<>();
        m.put("tokenizer.ggml.model", MetaValue.of(model));
        if (pre != null) m.put("tokenizer.ggml.pre", MetaValue.of(pre));
        m.put("tokenizer.ggml.tokens", MetaValue.array(GgufValueType.STRING, List.of("a", "b", "c", "ab", "abc")));
        m.put("tokenizer.ggml.merges", MetaValue.array(GgufValueType.STRING, List.of("a b", "ab c")));
        return new Metadata(m);
    }
}
