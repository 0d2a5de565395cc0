package dgr.engine.tokenizer;

/** The token table of a GGUF vocabulary: text, type and score per id, and the reverse lookup. */
final class Vocabulary {
    private final String[] texts;
    private final TokenType[] types;
    private final float[] scores;
    private final StringIntMap ids;

    Vocabulary(String[] texts, TokenType[] types, float[] scores) {
        this.texts = texts;
        this.types = types;
        this.scores = scores;
        this.ids = new StringIntMap(texts.length);
        // First id wins for duplicate texts, as in llama.cpp's token_to_id (later duplicates are unreachable by text).
        for (int i = 0; i < texts.length; i++) ids.putIfAbsent(texts[i], i);
    }

    int size() { return texts.length; }

    String text(int id) { return texts[id]; }

    TokenType type(int id) { return types[id]; }

    float score(int id) { return scores[id]; }

    /** The id spelled exactly by {@code text}, or -1. */
    int idOf(String text) {
        return ids.get(text);
    }

    boolean contains(int id) { return id >= 0 && id < texts.length; }
}
