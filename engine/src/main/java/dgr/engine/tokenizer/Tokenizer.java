package dgr.engine.tokenizer;

import dgr.gguf.Metadata;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;

/**
 * Text ↔ token ids for one GGUF vocabulary, giving the same ids as llama.cpp.
 *
 * <p>Two vocabulary kinds are supported ({@code tokenizer.ggml.model}): {@code llama}
 * (SentencePiece with byte fallback) and {@code gpt2} (byte-level BPE with a regex pre-tokenizer
 * chosen by {@code tokenizer.ggml.pre}). Immutable and safe to share between sessions; streaming
 * decode state lives in a per-session {@link Detokenizer}.
 */
public final class Tokenizer {
    /** Which tokenization algorithm the vocabulary uses. */
    public enum Model { SENTENCEPIECE, BYTE_LEVEL_BPE }

    /**
     * Token texts that end a turn in common chat formats. llama.cpp treats them as end of
     * generation whatever the metadata says, because converted models often name only one of
     * them (e.g. Qwen's EOS is &lt;|endoftext|&gt; while chats end with &lt;|im_end|&gt;).
     */
    private static final Set<String> END_OF_TURN_TEXTS = Set.of(
            "<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<end_of_turn>", "<|endoftext|>",
            "<|eom_id|>", "<EOT>", "_<EOT>", "<|end_of_text|>", "<end_of_utterance>");

    private final Vocabulary vocab;
    private final Model model;
    private final String preName;
    private final PieceEncoder encoder;
    private final SpecialTokenSplitter specials;
    private final int bos;
    private final int eos;
    private final int eot;
    private final int eom;
    private final boolean addBosByDefault;
    private final boolean addEosByDefault;
    private final boolean addSpacePrefix;
    private final boolean[] endOfGeneration;
    private final String chatTemplate;

    private Tokenizer(Builder b) {
        this.vocab = b.vocab;
        this.model = b.model;
        this.preName = b.preName;
        this.encoder = b.encoder;
        this.specials = new SpecialTokenSplitter(vocab);
        this.bos = b.bos;
        this.eos = b.eos;
        this.eot = b.eot;
        this.eom = b.eom;
        this.addBosByDefault = b.addBos;
        this.addEosByDefault = b.addEos;
        this.addSpacePrefix = b.addSpacePrefix;
        this.chatTemplate = b.chatTemplate;
        this.endOfGeneration = new boolean[vocab.size()];
        for (int id : new int[] {eos, eot, eom}) if (id >= 0) endOfGeneration[id] = true;
        for (int id = 0; id < vocab.size(); id++) {
            if (vocab.type(id) != TokenType.NORMAL && END_OF_TURN_TEXTS.contains(vocab.text(id))) endOfGeneration[id] = true;
        }
    }

    /** Reads a vocabulary from GGUF metadata ({@code tokenizer.ggml.*}, {@code tokenizer.chat_template}). */
    public static Tokenizer fromMetadata(Metadata md) {
        String modelName = md.getString("tokenizer.ggml.model");
        List<Object> tokenList = md.getArray("tokenizer.ggml.tokens");
        int n = tokenList.size();
        if (n == 0) throw new TokenizerException("tokenizer.ggml.tokens is empty");
        String[] texts = new String[n];
        for (int i = 0; i < n; i++) {
            if (!(tokenList.get(i) instanceof String s)) {
                throw new TokenizerException("tokenizer.ggml.tokens[" + i + "] is not a string");
            }
            texts[i] = s;
        }
        TokenType[] types = new TokenType[n];
        if (md.has("tokenizer.ggml.token_type")) {
            List<Object> t = requireLength(md, "tokenizer.ggml.token_type", n);
            for (int i = 0; i < n; i++) types[i] = TokenType.of(((Number) t.get(i)).longValue());
        } else {
            java.util.Arrays.fill(types, TokenType.NORMAL);
        }
        float[] scores = new float[n];
        if (md.has("tokenizer.ggml.scores")) {
            List<Object> s = requireLength(md, "tokenizer.ggml.scores", n);
            for (int i = 0; i < n; i++) scores[i] = ((Number) s.get(i)).floatValue();
        }
        Vocabulary vocab = new Vocabulary(texts, types, scores);

        Builder b = new Builder(vocab);
        b.chatTemplate = md.getString("tokenizer.chat_template", null);
        switch (modelName) {
            case "llama" -> {
                // llama.cpp's SentencePiece defaults: <unk>=0, <s>=1, </s>=2, BOS added, dummy prefix on.
                b.model = Model.SENTENCEPIECE;
                b.preName = md.getString("tokenizer.ggml.pre", "default");
                b.bos = n > 1 ? 1 : -1;
                b.eos = n > 2 ? 2 : -1;
                b.addBos = true;
                b.addSpacePrefix = md.getBool("tokenizer.ggml.add_space_prefix", true);
                int unk = tokenId(md, "tokenizer.ggml.unknown_token_id", n, 0);
                b.encoder = new SpmEncoder(vocab, b.addSpacePrefix, unk);
            }
            case "gpt2" -> {
                b.model = Model.BYTE_LEVEL_BPE;
                b.preName = md.getString("tokenizer.ggml.pre", "default");
                PreTokenizer pre = PreTokenizer.forName(b.preName);
                b.addBos = PreTokenizer.ignoresMerges(b.preName); // llama.cpp: Llama-3 family adds BOS by default
                b.encoder = new BpeEncoder(vocab, pre, ranks(md), PreTokenizer.ignoresMerges(b.preName));
            }
            default -> throw new TokenizerException("unsupported tokenizer.ggml.model '" + modelName
                    + "' (supported: llama, gpt2)");
        }
        b.bos = tokenId(md, "tokenizer.ggml.bos_token_id", n, b.bos);
        b.eos = tokenId(md, "tokenizer.ggml.eos_token_id", n, b.eos);
        b.eot = tokenId(md, "tokenizer.ggml.eot_token_id", n, -1);
        b.eom = tokenId(md, "tokenizer.ggml.eom_token_id", n, -1);
        b.addBos = md.getBool("tokenizer.ggml.add_bos_token", b.addBos);
        b.addEos = md.getBool("tokenizer.ggml.add_eos_token", false);
        if (b.model == Model.BYTE_LEVEL_BPE && PreTokenizer.hasNoBos(b.preName)) {
            // llama.cpp drops the BOS id of GLM-4 vocabularies whatever the file says: their templates write [gMASK]<sop>.
            b.bos = -1;
            b.addBos = false;
        }
        return new Tokenizer(b);
    }

    /**
     * Token ids of {@code text}.
     *
     * @param addBos       put the BOS token first (see {@link #addBosByDefault()} for what the model expects)
     * @param parseSpecial treat spelled-out CONTROL tokens such as {@code <|im_start|>} as those tokens;
     *                     when false they are plain text (USER_DEFINED tokens are matched either way)
     */
    public int[] encode(String text, boolean addBos, boolean parseSpecial) {
        IntList out = new IntList(text.length() / 3 + 2);
        if (addBos) out.add(bos());
        if (!text.isEmpty()) {
            boolean atStart = true;
            for (SpecialTokenSplitter.Fragment f : specials.split(text, parseSpecial)) {
                switch (f) {
                    case SpecialTokenSplitter.Raw(int start, int end) -> {
                        encoder.encode(text.substring(start, end), atStart, out);
                        atStart = false;
                    }
                    case SpecialTokenSplitter.Special(int id) -> {
                        out.add(id);
                        atStart = true;
                    }
                }
            }
        }
        return out.toArray();
    }

    /** The whole text of {@code ids}, as a prompt's tokens read back (SentencePiece's dummy prefix removed). */
    public String decode(int[] ids) {
        Detokenizer d = new Detokenizer(this, false, model == Model.SENTENCEPIECE && addSpacePrefix);
        StringBuilder sb = new StringBuilder();
        for (int id : ids) sb.append(d.push(id));
        return sb.append(d.flush()).toString();
    }

    /** A streaming decoder for one generation: it continues text, so no leading space is removed. */
    public Detokenizer detokenizer() { return new Detokenizer(this, false, false); }

    /** Like {@link #detokenizer()}, but CONTROL tokens are written out as their text. */
    public Detokenizer detokenizerWithSpecialTokens() { return new Detokenizer(this, true, false); }

    public int vocabSize() { return vocab.size(); }

    /** The token's text exactly as stored in the vocabulary (e.g. "▁the", "Ġthe", "&lt;0x0A&gt;"). */
    public String piece(int id) { return vocab.text(checkId(id)); }

    public TokenType type(int id) { return vocab.type(checkId(id)); }

    /** EOS, EOT, EOM, or a special token whose text ends a turn in a known chat format. */
    public boolean isEndOfGeneration(int id) { return id >= 0 && id < endOfGeneration.length && endOfGeneration[id]; }

    /** The BOS token id; a {@link TokenizerException} when the vocabulary defines none. */
    public int bos() {
        if (bos < 0) throw new TokenizerException("vocabulary has no BOS token");
        return bos;
    }

    public boolean hasBos() { return bos >= 0; }

    public OptionalInt eos() { return eos < 0 ? OptionalInt.empty() : OptionalInt.of(eos); }

    public OptionalInt eot() { return eot < 0 ? OptionalInt.empty() : OptionalInt.of(eot); }

    /** {@code tokenizer.ggml.add_bos_token}, or llama.cpp's default for this vocabulary kind. */
    public boolean addBosByDefault() { return addBosByDefault && bos >= 0; }

    /** {@code tokenizer.ggml.add_eos_token}; {@link #encode} never appends EOS by itself. */
    public boolean addEosByDefault() { return addEosByDefault && eos >= 0; }

    public Model model() { return model; }

    /** {@code tokenizer.ggml.pre} as read ("default" when absent). */
    public String preTokenizer() { return preName; }

    /** {@code tokenizer.chat_template}, when the model has one. */
    public Optional<String> chatTemplate() { return Optional.ofNullable(chatTemplate); }

    /** UTF-8 bytes the token contributes to generated text (nothing for CONTROL tokens unless rendered). */
    byte[] bytesOf(int id, boolean renderSpecial) {
        checkId(id);
        // Computed per call rather than cached: a few chars, and nothing to build at load time.
        if (renderSpecial && vocab.type(id) == TokenType.CONTROL) return vocab.text(id).getBytes(StandardCharsets.UTF_8);
        return plainBytes(vocab.text(id), vocab.type(id));
    }

    boolean isControl(int id) { return vocab.type(checkId(id)) == TokenType.CONTROL; }

    private int checkId(int id) {
        if (id < 0 || id >= vocab.size()) {
            throw new IllegalArgumentException("token id " + id + " outside vocabulary of " + vocab.size());
        }
        return id;
    }

    private static final byte[] NONE = new byte[0];

    /** llama.cpp's token_to_piece without special rendering. */
    private byte[] plainBytes(String text, TokenType type) {
        return switch (type) {
            case USER_DEFINED, UNKNOWN -> text.getBytes(StandardCharsets.UTF_8);
            case NORMAL -> model == Model.SENTENCEPIECE
                    ? text.replace('\u2581', ' ').getBytes(StandardCharsets.UTF_8)
                    : ByteLevel.decode(text);
            case BYTE -> model == Model.SENTENCEPIECE ? new byte[] {(byte) parseByteToken(text)} : NONE;
            case CONTROL, UNUSED, UNDEFINED -> NONE;
        };
    }

    private static int parseByteToken(String text) {
        if (text.length() == 6 && text.startsWith("<0x") && text.endsWith(">")) {
            try {
                return Integer.parseInt(text.substring(3, 5), 16);
            } catch (NumberFormatException ignored) {
                // fall through to the error below
            }
        }
        throw new TokenizerException("BYTE token '" + text + "' is not of the form <0xXX>");
    }

    private static List<Object> requireLength(Metadata md, String key, int n) {
        List<Object> list = md.getArray(key);
        if (list.size() != n) {
            throw new TokenizerException(key + " has " + list.size() + " entries but there are " + n + " tokens");
        }
        return list;
    }

    private static int tokenId(Metadata md, String key, int n, int dflt) {
        if (!md.has(key)) return dflt;
        long id = md.getLong(key);
        if (id < 0 || id >= n) throw new TokenizerException(key + " = " + id + " is outside the vocabulary of " + n);
        return (int) id;
    }

    private static StringIntMap ranks(Metadata md) {
        if (!md.has("tokenizer.ggml.merges")) {
            throw new TokenizerException("a gpt2 (BPE) vocabulary needs tokenizer.ggml.merges");
        }
        List<Object> merges = md.getArray("tokenizer.ggml.merges");
        StringIntMap ranks = new StringIntMap(merges.size());
        for (int i = 0; i < merges.size(); i++) {
            if (!(merges.get(i) instanceof String m) || m.indexOf(' ', 1) < 0) {
                throw new TokenizerException("tokenizer.ggml.merges[" + i + "] is not of the form 'left right'");
            }
            ranks.putIfAbsent(m, i); // the first listing of a pair is its rank, as in llama.cpp
        }
        return ranks;
    }

    private static final class Builder {
        final Vocabulary vocab;
        Model model;
        String preName;
        PieceEncoder encoder;
        int bos = -1, eos = -1, eot = -1, eom = -1;
        boolean addBos, addEos, addSpacePrefix;
        String chatTemplate;

        Builder(Vocabulary vocab) { this.vocab = vocab; }
    }
}
