package dgr.node.http;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;

/**
 * Server-sent events as OpenAI streams them: {@code data: {json}\n\n} per chunk, then
 * {@code data: [DONE]\n\n}. Every event is flushed at once so a client sees each token as it is
 * made, and so a gone client shows up as a failed write at the next token.
 */
public final class SseWriter {
    private static final byte[] DONE = "data: [DONE]\n\n".getBytes(StandardCharsets.US_ASCII);

    private final OutputStream out;
    private final ObjectMapper mapper;

    public SseWriter(OutputStream out, ObjectMapper mapper) {
        this.out = out;
        this.mapper = mapper;
    }

    /** Writes and flushes one event; throws {@link ClientGone} when the client has disconnected. */
    public void event(ObjectNode data) {
        try {
            byte[] json = mapper.writeValueAsBytes(data);
            byte[] frame = new byte[6 + json.length + 2];
            System.arraycopy("data: ".getBytes(StandardCharsets.US_ASCII), 0, frame, 0, 6);
            System.arraycopy(json, 0, frame, 6, json.length);
            frame[frame.length - 2] = '\n';
            frame[frame.length - 1] = '\n';
            write(frame);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException("cannot serialize an SSE chunk", e);
        }
    }

    public void done() { write(DONE); }

    private void write(byte[] bytes) {
        try {
            out.write(bytes);
            out.flush();
        } catch (IOException | RuntimeException e) {
            // Helidon reports a closed socket as UncheckedIOException or its own runtime exceptions.
            throw new ClientGone(e);
        }
    }

    /** The client closed the connection: the request's session must be cancelled. */
    public static final class ClientGone extends RuntimeException {
        ClientGone(Throwable cause) { super("client disconnected", cause, false, false); }
    }
}
