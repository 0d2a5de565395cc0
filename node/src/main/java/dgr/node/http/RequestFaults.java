package dgr.node.http;

import io.helidon.common.buffers.DataReader;
import io.helidon.common.socket.SocketWriterException;
import io.helidon.webserver.CloseConnectionException;
import io.helidon.webserver.ServerConnectionException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.ClosedChannelException;
import java.util.HexFormat;
import java.util.concurrent.ThreadLocalRandom;

/** Tells a client's faults from the server's, and names them in one line. */
final class RequestFaults {
    private RequestFaults() {}

    /** True when {@code e} (or a cause) says the connection is gone: nobody is left to answer. */
    static boolean clientGone(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof SocketWriterException || t instanceof ServerConnectionException
                    || t instanceof CloseConnectionException || t instanceof ClosedChannelException
                    || t instanceof java.net.SocketException || t instanceof SseWriter.ClientGone) {
                return true;
            }
            if (t instanceof IOException io && io.getMessage() != null
                    && (io.getMessage().contains("Broken pipe") || io.getMessage().contains("Connection reset"))) {
                return true;
            }
            if (t.getCause() == t) break;
        }
        return false;
    }

    /**
     * What was wrong with a body Helidon could not decode, in the client's terms: its decoder throws
     * NumberFormatException for a chunk size that is not hex, InsufficientDataAvailableException when
     * the connection ends before Content-Length or the last chunk.
     */
    static String bodyFault(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof NumberFormatException) return "a chunk size is not a hexadecimal number";
            if (t instanceof DataReader.InsufficientDataAvailableException) {
                return "the connection ended before the whole body arrived (shorter than its Content-Length or its chunks said)";
            }
            if (t instanceof java.io.InterruptedIOException || t instanceof java.nio.channels.ClosedByInterruptException) {
                return "the body did not arrive within the header timeout";
            }
            if (t.getCause() == t) break;
        }
        String m = e.getMessage();
        return "its framing is invalid (" + (m == null ? e.getClass().getSimpleName() : m.replaceAll("\\s+", " ")) + ")";
    }

    /** A short id a 500's body and the log line share, so an operator can find the trace a client reports. */
    static String incidentId() {
        byte[] b = new byte[6];
        ThreadLocalRandom.current().nextBytes(b);
        return "err_" + HexFormat.of().formatHex(b);
    }

}
