package dgr.engine.tokenizer;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/**
 * GPT-2's byte-level alphabet: every byte is shown as one printable code point so that BPE
 * vocabularies can be stored as text. Printable Latin-1 bytes map to themselves; the other 68
 * bytes map, in byte order, to U+0100.. (space becomes 'Ġ', newline 'Ċ').
 */
final class ByteLevel {
    private static final char[] BYTE_TO_CHAR = new char[256];
    private static final int[] CHAR_TO_BYTE = new int[0x200];

    static {
        java.util.Arrays.fill(CHAR_TO_BYTE, -1);
        int shifted = 0;
        for (int b = 0; b < 256; b++) {
            boolean printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
            char c = printable ? (char) b : (char) (256 + shifted++);
            BYTE_TO_CHAR[b] = c;
            CHAR_TO_BYTE[c] = b;
        }
    }

    private ByteLevel() {}

    /** The byte-level spelling of some text's UTF-8 bytes: one char per byte. */
    static String encode(String text) {
        byte[] utf8 = text.getBytes(StandardCharsets.UTF_8);
        char[] out = new char[utf8.length];
        for (int i = 0; i < utf8.length; i++) out[i] = BYTE_TO_CHAR[utf8[i] & 0xFF];
        return new String(out);
    }

    /** The char that spells one byte. */
    static char charOf(int b) { return BYTE_TO_CHAR[b & 0xFF]; }

    /**
     * The bytes a byte-level token spells. A code point outside the alphabet (possible in
     * hand-made vocabularies) stands for its own UTF-8 bytes rather than failing the stream.
     */
    static byte[] decode(String piece) {
        byte[] out = new byte[piece.length()];
        for (int i = 0; i < piece.length(); i++) {
            char c = piece.charAt(i);
            int b = c < CHAR_TO_BYTE.length ? CHAR_TO_BYTE[c] : -1;
            if (b < 0) return decodeMixed(piece);
            out[i] = (byte) b;
        }
        return out;
    }

    private static byte[] decodeMixed(String piece) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(piece.length() + 8);
        for (int i = 0; i < piece.length(); ) {
            int cp = piece.codePointAt(i);
            i += Character.charCount(cp);
            int b = cp < CHAR_TO_BYTE.length ? CHAR_TO_BYTE[cp] : -1;
            if (b >= 0) {
                out.write(b);
            } else {
                out.writeBytes(new String(Character.toChars(cp)).getBytes(StandardCharsets.UTF_8));
            }
        }
        return out.toByteArray();
    }
}
