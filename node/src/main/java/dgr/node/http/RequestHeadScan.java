package dgr.node.http;

import java.nio.charset.StandardCharsets;
import java.util.Locale;

/**
 * Watches the bytes a refused client sends for the end of its request head (the blank line), and
 * whether that head announced a body, so a refusal can close as soon as nothing more is coming
 * instead of waiting out its linger. Only the head's first 16 KiB are kept.
 */
final class RequestHeadScan {
    private static final int MAX_HEAD = 16 * 1024;
    private final StringBuilder head = new StringBuilder();
    private boolean ended;

    void scan(byte[] bytes) {
        if (ended || head.length() >= MAX_HEAD) return;
        head.append(new String(bytes, 0, Math.min(bytes.length, MAX_HEAD - head.length()), StandardCharsets.ISO_8859_1));
        ended = head.indexOf("\r\n\r\n") >= 0 || head.indexOf("\n\n") >= 0;
    }

    /** The head is complete and says no body follows (no Transfer-Encoding, no non-zero Content-Length). */
    boolean endedWithoutBody() {
        if (!ended) return false;
        String h = head.toString().toLowerCase(Locale.ROOT);
        if (h.contains("\ntransfer-encoding:")) return false;
        int at = h.indexOf("\ncontent-length:");
        if (at < 0) return true;
        int eol = h.indexOf('\n', at + 1);
        String value = h.substring(at + "\ncontent-length:".length(), eol < 0 ? h.length() : eol).strip();
        return value.equals("0");
    }
}
