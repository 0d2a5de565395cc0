package dgr.engine.tokenizer;

/** A vocabulary that cannot be used as stored, or a request the vocabulary cannot serve (e.g. BOS without a BOS token). */
public final class TokenizerException extends RuntimeException {
    public TokenizerException(String message) { super(message); }
}
