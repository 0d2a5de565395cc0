package dgr.engine.tokenizer;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Turns a stream of token ids into text for one session. A token can end inside a multi-byte
 * UTF-8 character (byte tokens, byte-level BPE pieces), so bytes of an unfinished character are
 * held back until the token that completes it arrives: {@link #push} only ever returns whole
 * characters. Bytes that can never form a character come out as U+FFFD. Not thread-safe.
 */
public final class Detokenizer {
    private final Tokenizer tokenizer;
    private final boolean renderSpecial;
    private boolean stripLeadingSpace;
    private byte[] pending = new byte[16];
    private int pendingLength;

    Detokenizer(Tokenizer tokenizer, boolean renderSpecial, boolean stripLeadingSpace) {
        this.tokenizer = tokenizer;
        this.renderSpecial = renderSpecial;
        this.stripLeadingSpace = stripLeadingSpace;
    }

    /** Adds one token; returns the text that is now complete (possibly empty). */
    public String push(int id) {
        byte[] bytes = tokenizer.bytesOf(id, renderSpecial);
        int from = 0;
        if (stripLeadingSpace && !tokenizer.isControl(id)) {
            // SentencePiece's dummy prefix: the first text token of a whole input starts with it.
            if (bytes.length > 0 && bytes[0] == ' ') from = 1;
            stripLeadingSpace = false;
        }
        append(bytes, from);
        int cut = completeLength();
        if (cut == 0) return "";
        String text = new String(pending, 0, cut, StandardCharsets.UTF_8);
        System.arraycopy(pending, cut, pending, 0, pendingLength - cut);
        pendingLength -= cut;
        return text;
    }

    /** Ends the stream: returns whatever is held back, an unfinished character as U+FFFD. */
    public String flush() {
        String text = new String(pending, 0, pendingLength, StandardCharsets.UTF_8);
        pendingLength = 0;
        return text;
    }

    private void append(byte[] bytes, int from) {
        int n = bytes.length - from;
        if (pendingLength + n > pending.length) pending = Arrays.copyOf(pending, Math.max(pending.length * 2, pendingLength + n));
        System.arraycopy(bytes, from, pending, pendingLength, n);
        pendingLength += n;
    }

    /** Length of the longest prefix of the pending bytes that does not end inside an unfinished character. */
    private int completeLength() {
        for (int back = 1; back <= Math.min(4, pendingLength); back++) {
            int b = pending[pendingLength - back] & 0xFF;
            if ((b & 0xC0) == 0x80) continue; // continuation byte: keep looking for the lead byte
            int needed = b < 0xC0 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : b < 0xF8 ? 4 : 1;
            return needed > back ? pendingLength - back : pendingLength;
        }
        return pendingLength; // only continuation bytes: malformed, let the decoder replace them
    }
}
