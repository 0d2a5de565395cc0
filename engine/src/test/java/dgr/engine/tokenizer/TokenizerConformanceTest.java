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
        assertSameIds(Fixtures.vocab(vocab), Fixtures.cases(vocab), vocab);
    }

    /**
     * SentencePiece without the dummy space in front ({@code tokenizer.ggml.add_space_prefix =
     * false}, as Gemma's vocabularies are): Llama 2's vocabulary with the flag off, every case against
     * llama.cpp's ids for it (recorded with {@code tools/llamacpp/compare.mjs --text} on a model
     * carrying this vocabulary and flag; all 46 agreed, BOS policy included).
     */
    @Test
    void sentencePieceWithoutTheSpacePrefixGivesLlamaCppIds() throws Exception {
        java.util.Map<String, dgr.gguf.MetaValue> md;
        try (dgr.gguf.GgufFile f = dgr.gguf.GgufFile.open(Fixtures.resource("tokenizer/ggml-vocab-llama-spm.gguf"))) {
            md = new java.util.LinkedHashMap<>(f.metadata().asMap());
        }
        md.put("tokenizer.ggml.add_space_prefix", dgr.gguf.MetaValue.bool(false));
        Tokenizer tok = Tokenizer.fromMetadata(new dgr.gguf.Metadata(md));
        java.net.URL out = getClass().getResource("/tokenizer/llama-spm-no-space-prefix.out");
        List<Fixtures.Case> cases = Fixtures.cases("llama-spm", java.nio.file.Path.of(out.toURI()));
        assertSameIds(tok, cases, "llama-spm without the space prefix");
        assertThat(tok.encode("Hello", false, false)).containsExactly(10994); // "▁Hello" (15043) with the prefix
    }

    /**
     * Every {@code tokenizer.ggml.pre} name whose split differs from another's, on Llama 3's
     * vocabulary: llama.cpp's ids for the 46 texts under each name (its regexes and per-name flags,
     * recorded with {@code tools/llamacpp/compare.mjs --text} on a one-layer model carrying the
     * vocabulary and the name), so each split list is checked against llama.cpp itself, not only
     * against a second regex engine.
     */
    @Test
    void everyPreTokenizerNameGivesLlamaCppIdsOnLlama3sVocabulary() throws Exception {
        java.util.Map<String, List<int[]>> expected = new java.util.LinkedHashMap<>();
        for (String line : java.nio.file.Files.readAllLines(java.nio.file.Path.of(
                getClass().getResource("/tokenizer/llama-bpe-pre-names.tsv").toURI()))) {
            if (line.startsWith("#") || line.isBlank()) continue;
            String[] f = line.split("\t", -1);
            int[] ids = f[2].isEmpty() ? new int[0] : Arrays.stream(f[2].split(" ")).mapToInt(Integer::parseInt).toArray();
            expected.computeIfAbsent(f[0], k -> new ArrayList<>()).add(ids);
        }
        assertThat(expected).hasSize(22);
        java.util.Map<String, dgr.gguf.MetaValue> md;
        try (dgr.gguf.GgufFile f = dgr.gguf.GgufFile.open(Fixtures.resource("tokenizer/ggml-vocab-llama-bpe.gguf"))) {
            md = new java.util.LinkedHashMap<>(f.metadata().asMap());
        }
        List<Fixtures.Case> texts = Fixtures.cases("llama-bpe");
        for (var e : expected.entrySet()) {
            md.put("tokenizer.ggml.pre", dgr.gguf.MetaValue.of(e.getKey()));
            Tokenizer tok = Tokenizer.fromMetadata(new dgr.gguf.Metadata(md));
            List<Fixtures.Case> cases = new ArrayList<>();
            for (int i = 0; i < texts.size(); i++) cases.add(new Fixtures.Case(i, texts.get(i).text(), e.getValue().get(i)));
            assertSameIds(tok, cases, "llama-bpe as " + e.getKey());
        }
    }

    private static void assertSameIds(Tokenizer tok, List<Fixtures.Case> cases, String vocab) {
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
