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
import dgr.gguf.GgufValueType;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Real tokenizer vocabularies shipped in the jar as vocab-only GGUF files under {@code dgr/vocab/}. */
public final class Vocabularies {
    private Vocabularies() {}

    /**
     * The eleven control tokens Phi-3 adds after Llama 2's 32000 (ids 32000–32010, as in its
     * tokenizer.json); llama.cpp looks some of them up by text when it loads a {@code phi3} model.
     */
    private static final List<String> PHI3_ADDED = List.of("<|endoftext|>", "<|assistant|>", "<|placeholder1|>",
            "<|placeholder2|>", "<|placeholder3|>", "<|placeholder4|>", "<|system|>", "<|end|>", "<|placeholder5|>",
            "<|placeholder6|>", "<|user|>");

    /**
     * The {@code tokenizer.*} metadata of a shipped vocabulary ({@code tiny-gpt2}, {@code llama-spm},
     * {@code llama-bpe}), or {@code phi3-spm}: Llama 2's SentencePiece vocabulary with Phi-3's added
     * control tokens, {@code <|endoftext|>} as EOS.
     */
    public static Map<String, MetaValue> tokenizerMetadata(String vocab) {
        if (vocab.equals("phi3-spm")) return phi3(tokenizerMetadata("llama-spm"));
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

    private static Map<String, MetaValue> phi3(Map<String, MetaValue> spm) {
        Map<String, MetaValue> out = new LinkedHashMap<>(spm);
        out.put("tokenizer.ggml.tokens", appended(spm, "tokenizer.ggml.tokens", GgufValueType.STRING, PHI3_ADDED));
        out.put("tokenizer.ggml.scores", appended(spm, "tokenizer.ggml.scores", GgufValueType.FLOAT32,
                java.util.Collections.nCopies(PHI3_ADDED.size(), 0f)));
        out.put("tokenizer.ggml.token_type", appended(spm, "tokenizer.ggml.token_type", GgufValueType.INT32,
                java.util.Collections.nCopies(PHI3_ADDED.size(), 3))); // control
        out.put("tokenizer.ggml.eos_token_id", MetaValue.u32(32000));
        return out;
    }

    private static MetaValue appended(Map<String, MetaValue> m, String key, GgufValueType type, List<?> more) {
        MetaValue.MetaArray a = (MetaValue.MetaArray) m.get(key).value();
        if (a.elementType() != type) throw new IllegalStateException(key + " holds " + a.elementType() + ", not " + type);
        List<Object> all = new java.util.ArrayList<>(a.elements());
        all.addAll(more);
        return MetaValue.array(type, all);
    }
}