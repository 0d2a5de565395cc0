package dgr.gguf.synth;

import dgr.gguf.GgufFile;
import dgr.gguf.GgufFormatException;
import dgr.gguf.MetaValue;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.LinkedHashMap;
import java.util.Map;

/** Real tokenizer vocabularies shipped in the jar as vocab-only GGUF files under {@code dgr/vocab/}. */
public final class Vocabularies {
    private Vocabularies() {}

    /** The {@code tokenizer.*} metadata of a shipped vocabulary ({@code tiny-gpt2}, {@code llama-spm}, {@code llama-bpe}). */
    public static Map<String, MetaValue> tokenizerMetadata(String vocab) {
        String resource = "/dgr/vocab/" + vocab + ".gguf";
        Path tmp = null;
        try (InputStream in = Vocabularies.class.getResourceAsStream(resource)) {
            if (in == null) throw new IllegalArgumentException("no shipped vocabulary '" + vocab + "'");
            tmp = Files.createTempFile("dgr-vocab-", ".gguf");
            Files.copy(in, tmp, StandardCopyOption.REPLACE_EXISTING);
            try (GgufFile f = GgufFile.open(tmp)) {
                Map<String, MetaValue> out = new LinkedHashMap<>();
                f.metadata().asMap().forEach((k, v) -> {
                    if (k.startsWith("tokenizer.")) out.put(k, v);
                });
                if (!out.containsKey("tokenizer.ggml.tokens")) {
                    throw new GgufFormatException(resource + ": vocabulary has no tokenizer.ggml.tokens");
                }
                return out;
            }
        } catch (IOException e) {
            throw new UncheckedIOException("reading vocabulary " + resource, e);
        } finally {
            if (tmp != null) {
                try { Files.deleteIfExists(tmp); } catch (IOException ignored) { }
            }
        }
    }
}
