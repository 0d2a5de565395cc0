package dgr.engine.tokenizer;

import dgr.gguf.GgufFile;
import java.io.IOException;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** Test fixtures copied from the shared conformance set: vocab-only GGUFs and llama.cpp's .inp/.out cases. */
final class Fixtures {
    static final List<String> VOCABS = List.of("llama-spm", "llama-bpe", "qwen2", "deepseek-llm", "gpt-2");
    private static final String SEPARATOR = "\n__ggml_vocab_test__\n";
    private static final Map<String, Tokenizer> CACHE = new ConcurrentHashMap<>();

    record Case(int index, String text, int[] expected) {}

    private Fixtures() {}

    static Path resource(String name) {
        URL url = Fixtures.class.getResource("/conformance/" + name);
        if (url == null) throw new IllegalStateException("missing test resource " + name);
        try {
            return Path.of(url.toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    static Tokenizer load(Path gguf) {
        try (GgufFile f = GgufFile.open(gguf)) {
            return Tokenizer.fromMetadata(f.metadata());
        }
    }

    /** Loaded once per test run: the vocabularies are up to 8 MB. */
    static Tokenizer vocab(String name) {
        return CACHE.computeIfAbsent(name, n -> load(resource("tokenizer/ggml-vocab-" + n + ".gguf")));
    }

    static Tokenizer llamaTiny() {
        return CACHE.computeIfAbsent("llama-tiny", n -> load(resource("models/llama-tiny-Q4_0.gguf")));
    }

    static List<Case> cases(String vocab) throws IOException {
        return cases(vocab, resource("tokenizer/ggml-vocab-" + vocab + ".gguf.out"));
    }

    /** {@code vocab}'s .inp texts with the ids of {@code outFile} (one line of ids per text). */
    static List<Case> cases(String vocab, Path outFile) throws IOException {
        String inp = Files.readString(resource("tokenizer/ggml-vocab-" + vocab + ".gguf.inp"), StandardCharsets.UTF_8);
        String out = Files.readString(outFile, StandardCharsets.UTF_8);
        List<String> texts = new ArrayList<>(Arrays.asList(inp.split(SEPARATOR, -1)));
        if (!texts.getLast().isEmpty()) throw new IllegalStateException(vocab + ".inp does not end with a separator");
        texts.removeLast();
        String[] lines = out.split("\n", -1);
        if (lines.length != texts.size() + 1 || !lines[lines.length - 1].isEmpty()) {
            throw new IllegalStateException(vocab + ": " + texts.size() + " cases but " + (lines.length - 1) + " lines");
        }
        List<Case> cases = new ArrayList<>();
        for (int i = 0; i < texts.size(); i++) {
            String line = lines[i].strip();
            int[] ids = line.isEmpty() ? new int[0] : Arrays.stream(line.split(" ")).mapToInt(Integer::parseInt).toArray();
            cases.add(new Case(i, texts.get(i), ids));
        }
        return cases;
    }
}
