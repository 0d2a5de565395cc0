package dgr.runtime;

/**
 * Streaming detokenizer of one session: turns generated token ids into text pieces (a piece may be
 * empty while a multi-byte character is incomplete). Needed only for stop strings and for the text
 * in token events; the node adapts the engine's detokenizer to it.
 */
@FunctionalInterface
public interface TextDecoder {
    String push(int tokenId);
}
