package dgr.node.api;

/**
 * JSON bodies must be UTF-8 (RFC 8259 §8.1). Jackson would also read UTF-16 and UTF-32 (it guesses
 * them from a byte-order mark or the zero bytes around ASCII), so a body in another encoding could be
 * answered as if it were fine by one server and refused by the next; here it is a 400 that names the
 * encoding. A UTF-8 byte-order mark is tolerated, as the RFC allows.
 */
public final class BodyEncoding {
    private BodyEncoding() {}

    /** Throws a 400 naming the encoding when {@code body} is recognisably UTF-16 or UTF-32. */
    static void requireUtf8(byte[] body) {
        String found = detect(body);
        if (found != null) {
            throw ApiError.invalid("The request body is encoded as " + found + "; JSON request bodies must be UTF-8.",
                    null, "invalid_encoding");
        }
    }

    /**
     * Throws a 400 naming the charset when a request's Content-Type declares one other than UTF-8
     * (e.g. {@code application/json; charset=utf-16}); {@code contentType} may be null.
     */
    public static void requireUtf8Charset(String contentType) {
        if (contentType == null) return;
        for (String param : contentType.split(";")) {
            int eq = param.indexOf('=');
            if (eq < 0 || !param.substring(0, eq).strip().equalsIgnoreCase("charset")) continue;
            String charset = param.substring(eq + 1).strip().replace("\"", "");
            if (!charset.equalsIgnoreCase("utf-8") && !charset.equalsIgnoreCase("utf8")) {
                throw ApiError.invalid("The request declares charset=" + charset + " (Content-Type); JSON request bodies"
                        + " must be UTF-8.", null, "invalid_encoding");
            }
        }
    }

    /** The encoding a body's first four bytes announce (RFC 4627 §3, byte-order marks), or null for UTF-8 or unknown. */
    static String detect(byte[] b) {
        int n = b.length;
        int b0 = n > 0 ? b[0] & 0xff : -1, b1 = n > 1 ? b[1] & 0xff : -1, b2 = n > 2 ? b[2] & 0xff : -1, b3 = n > 3 ? b[3] & 0xff : -1;
        if (b0 == 0x00 && b1 == 0x00 && b2 == 0xFE && b3 == 0xFF) return "UTF-32BE (byte-order mark)";
        if (b0 == 0xFF && b1 == 0xFE && b2 == 0x00 && b3 == 0x00) return "UTF-32LE (byte-order mark)";
        if (b0 == 0xFE && b1 == 0xFF) return "UTF-16BE (byte-order mark)";
        if (b0 == 0xFF && b1 == 0xFE) return "UTF-16LE (byte-order mark)";
        if (n >= 4 && b0 == 0 && b1 == 0 && b2 == 0 && b3 != 0) return "UTF-32BE";
        if (n >= 4 && b0 != 0 && b1 == 0 && b2 == 0 && b3 == 0) return "UTF-32LE";
        if (n >= 2 && b0 == 0 && b1 != 0) return "UTF-16BE";
        if (n >= 2 && b0 != 0 && b1 == 0) return "UTF-16LE";
        return null;
    }
}
