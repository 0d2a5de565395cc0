package dgr.node.http;

import io.helidon.common.buffers.DataReader;
import io.helidon.common.buffers.DataWriter;
import io.helidon.common.socket.HelidonSocket;
import io.helidon.common.socket.PeerInfo;
import io.helidon.webserver.ConnectionContext;
import io.helidon.webserver.ListenerContext;
import io.helidon.webserver.ProxyProtocolData;
import io.helidon.webserver.Router;
import java.util.Optional;
import java.util.concurrent.ExecutorService;

/**
 * Helidon's connection context with one change: its reader tells the {@link ConnectionGuard} when
 * bytes arrive on the thread that reads the connection, so the header timeout counts from a
 * request's first byte (a request line trickled byte by byte is cut off like trickled headers;
 * Helidon itself only hears of a request once its request line is complete).
 */
final class GuardedContext implements ConnectionContext {
    private final ConnectionContext ctx;
    private final DataReader reader;
    private volatile Thread owner;
    private volatile boolean closing;
    private volatile boolean clientAskedClose;

    GuardedContext(ConnectionContext ctx, ConnectionGuard guard) {
        this.ctx = ctx;
        DataReader socket = ctx.dataReader();
        this.reader = DataReader.create(() -> {
            // After an answer with "Connection: close" the next read on the connection's thread is its end,
            // so Helidon closes it now instead of waiting for the client (RFC 9112 §9.6: the server closes).
            if (closing && Thread.currentThread() == owner) throw new DataReader.InsufficientDataAvailableException();
            socket.ensureAvailable(); // blocks for the next bytes; throws at end of stream as the reader expects
            byte[] bytes = socket.readBytes(socket.available());
            // A watcher reading on another thread (ConnectionGuard.watch) is not a request arriving.
            if (Thread.currentThread() == owner) guard.bytesArrived();
            return bytes;
        });
    }

    /** The request being read asked for {@code Connection: close}. */
    void clientAskedClose() { this.clientAskedClose = true; }

    /**
     * An answer is being sent: when it closes the connection (the client asked, or the handler set
     * {@code Connection: close}), no further request is read.
     */
    void answering(boolean closes) {
        if (closes || clientAskedClose) this.closing = true;
    }

    /** The thread that reads requests from this connection (Helidon's, for the connection's life). */
    void readBy(Thread t) { this.owner = t; }

    @Override
    public DataReader dataReader() { return reader; }

    @Override
    public DataWriter dataWriter() { return ctx.dataWriter(); }

    @Override
    public ListenerContext listenerContext() { return ctx.listenerContext(); }

    @Override
    public ExecutorService executor() { return ctx.executor(); }

    @Override
    public Router router() { return ctx.router(); }

    @Override
    public Optional<ProxyProtocolData> proxyProtocolData() { return ctx.proxyProtocolData(); }

    @Override
    public HelidonSocket serverSocket() { return ctx.serverSocket(); }

    @Override
    public PeerInfo remotePeer() { return ctx.remotePeer(); }

    @Override
    public PeerInfo localPeer() { return ctx.localPeer(); }

    @Override
    public boolean isSecure() { return ctx.isSecure(); }

    @Override
    public String socketId() { return ctx.socketId(); }

    @Override
    public String childSocketId() { return ctx.childSocketId(); }
}
