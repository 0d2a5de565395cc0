package dgr.tracker.cluster;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A node that only answers the tracker's {@code GET /v1/capabilities} (with the report it is given)
 * and drops every generation request before its first byte, as a node that dies under a request does.
 * On loopback, on a free port; {@link #close} stops it (then connecting is refused, as to a killed node).
 */
public final class StubNode implements AutoCloseable {
    private final HttpServer server;
    private volatile String capabilities;
    public final AtomicInteger capabilityPulls = new AtomicInteger();
    public final AtomicInteger dropped = new AtomicInteger();

    public StubNode(String capabilities) {
        this.capabilities = capabilities;
        try {
            server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 16);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        server.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
        server.createContext("/", ex -> {
            try (ex) {
                if (ex.getRequestMethod().equals("GET") && ex.getRequestURI().getPath().equals("/v1/capabilities")) {
                    capabilityPulls.incrementAndGet();
                    byte[] b = this.capabilities.getBytes(StandardCharsets.UTF_8);
                    ex.getResponseHeaders().set("Content-Type", "application/json");
                    ex.sendResponseHeaders(200, b.length);
                    ex.getResponseBody().write(b);
                } else {
                    dropped.incrementAndGet(); // closed without a status line: the request fails before its first byte
                }
            }
        });
        server.start();
    }

    public URI url() { return URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/"); }

    /** The heartbeat body a dgr node with this report would send. */
    public String heartbeat() { return "{\"url\":\"" + url() + "\",\"capabilities\":" + capabilities + "}"; }

    @Override
    public void close() { server.stop(0); }
}
