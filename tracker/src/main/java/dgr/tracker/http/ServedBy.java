package dgr.tracker.http;

import java.util.ArrayList;
import java.util.List;

/**
 * The nodes whose chunks reached one request's client, in order ({@code X-Dgr-Node}: comma-separated), and
 * where a resume's time went: from the failure to the next node's response headers (routing, connecting),
 * then to its first token (the recomputation of prompt + delivered tokens).
 */
final class ServedBy {
    /**
     * How a stream's client asked for the full list at the stream's end: an {@code X-Dgr-Node} trailer (it sent
     * {@code TE: trailers}), an SSE comment line {@code : X-Dgr-Node a,b} just before {@code data: [DONE]} (it
     * sent {@code X-Dgr-Node-Comment: true}; for clients that cannot read trailers, such as Java's HttpClient;
     * SSE parsers skip comments, so an OpenAI SDK never sees it), or neither.
     */
    enum AtEnd {
        NONE, TRAILER, COMMENT;

        static AtEnd of(String te, String comment) {
            if (comment != null && comment.strip().equalsIgnoreCase("true")) return COMMENT;
            return te != null && te.toLowerCase(java.util.Locale.ROOT).contains("trailers") ? TRAILER : NONE;
        }
    }

    private final List<String> nodes = new ArrayList<>();
    private long failedAtNanos;
    private long headersAtNanos;

    /** A chunk from {@code nodeId} reached the client. Returns the resume's timing when it is the first after a failure, else null. */
    String chunkFrom(String nodeId, int tokensBefore) {
        String resumed = null;
        if (!nodes.isEmpty() && failedAtNanos != 0) {
            long now = System.nanoTime();
            resumed = "resumed on " + nodeId + " after " + tokensBefore + " tokens; the client's gap: "
                    + (headersAtNanos - failedAtNanos) / 1_000_000 + " ms to the node's headers + "
                    + (now - headersAtNanos) / 1_000_000 + " ms to its first token";
        }
        failedAtNanos = 0;
        if (nodes.isEmpty() || !nodes.getLast().equals(nodeId)) nodes.add(nodeId);
        return resumed;
    }

    void failed() { failedAtNanos = System.nanoTime(); }

    void headers() { headersAtNanos = System.nanoTime(); }

    /** The X-Dgr-Node value: every node that served, in order. */
    String header() { return String.join(",", nodes); }

    /** A stream's last event, {@code data: [DONE]}, after the SSE comment naming every node when the client asked for it. */
    String done(AtEnd atEnd) { return (atEnd == AtEnd.COMMENT ? ": X-Dgr-Node " + header() + "\n\n" : "") + "data: [DONE]\n\n"; }
}
