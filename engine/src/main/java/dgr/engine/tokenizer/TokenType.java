package dgr.engine.tokenizer;

/** A token's kind as stored in {@code tokenizer.ggml.token_type} (llama.cpp's {@code llama_token_type} numbering). */
public enum TokenType {
    UNDEFINED, NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE;

    private static final TokenType[] BY_ID = values();

    static TokenType of(long id) {
        if (id < 0 || id >= BY_ID.length) throw new TokenizerException("unknown token type " + id);
        return BY_ID[(int) id];
    }
}
