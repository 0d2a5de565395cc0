package dgr.engine.tokenizer;

/** Tokenizes one stretch of plain text (no special tokens in it) for one kind of vocabulary. */
sealed interface PieceEncoder permits SpmEncoder, BpeEncoder {
    /**
     * @param atStart true when the text starts the input or follows a special token
     *                (where SentencePiece adds its dummy-prefix space)
     */
    void encode(String text, boolean atStart, IntList out);
}
