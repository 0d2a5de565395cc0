package dgr.tracker.cluster;

import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A node that dies mid-stream on cue: an HTTP/1.1 front for a real node that forwards each request,
 * relays the first {@code cutAfter} events of its answer and then closes the socket without finishing
 * the response, as the socket of a killed process closes. Deterministic where killing a fast node at the
 * right token would be a race.
 */
public final class CuttingProxy implements AutoCloseable {
    private final ServerSocket server;
    private final URI target;
    private final int cutAfter;
    private final boolean hang;
    private final java.util.concurrent.CountDownLatch closed = new java.util.concurrent.CountDownLatch(1);
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private final Thread acceptor;
    public final AtomicInteger cuts = new AtomicInteger();
    /** The report this stand-in node answers the tracker's GET /v1/capabilities with (null: forwarded). */
    public volatile String capabilities;

    public CuttingProxy(URI target, int cutAfter) throws IOException {
        this(target, cutAfter, false);
    }

    /** With {@code hang}, the proxy stops sending after {@code cutAfter} events but keeps the socket open (a hung node). */
    public CuttingProxy(URI target, int cutAfter, boolean hang) throws IOException {
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        this.target = target;
        this.cutAfter = cutAfter;
        this.hang = hang;
        this.acceptor = Thread.ofVirtual().start(this::acceptLoop);
    }

    public URI url() { return URI.create("http://127.0.0.1:" + server.getLocalPort() + "/"); }

    private void acceptLoop() {
        while (!server.isClosed()) {
            try {
                Socket s = server.accept();
                Thread.ofVirtual().start(() -> serve(s));
            } catch (IOException e) {
                return; // closed
            }
        }
    }

    private void serve(Socket s) {
        try (s) {
            InputStream in = s.getInputStream();
            String requestLine = line(in);
            Map<String, String> headers = new LinkedHashMap<>();
            for (String h = line(in); !h.isEmpty(); h = line(in)) {
                int colon = h.indexOf(':');
                headers.put(h.substring(0, colon).trim().toLowerCase(Locale.ROOT), h.substring(colon + 1).trim());
            }
            byte[] body = in.readNBytes(Integer.parseInt(headers.getOrDefault("content-length", "0")));
            String path = requestLine.split(" ")[1];
            if (requestLine.startsWith("GET /v1/capabilities") && capabilities != null) {
                byte[] caps = capabilities.getBytes(StandardCharsets.UTF_8);
                OutputStream out = s.getOutputStream();
                out.write(("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + caps.length
                        + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                out.write(caps);
                out.flush();
                return;
            }
            HttpRequest.Builder b = HttpRequest.newBuilder(target.resolve(path)).timeout(Duration.ofSeconds(30))
                    .POST(HttpRequest.BodyPublishers.ofByteArray(body));
            for (String h : new String[] {"authorization", "content-type", "x-dgr-request-id", "x-dgr-tenant"}) {
                if (headers.containsKey(h)) b.header(h, headers.get(h));
            }
            HttpResponse<InputStream> r = http.send(b.build(), HttpResponse.BodyHandlers.ofInputStream());
            OutputStream out = s.getOutputStream();
            out.write(("HTTP/1.1 " + r.statusCode() + " OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            out.flush();
            int events = 0;
            try (BufferedReader lines = new BufferedReader(new InputStreamReader(r.body(), StandardCharsets.UTF_8))) {
                for (String l = lines.readLine(); l != null; l = lines.readLine()) {
                    if (l.startsWith("data:") && events == cutAfter) {
                        cuts.incrementAndGet();
                        if (hang) closed.await(); // silent, socket open, until the test ends
                        return; // the socket closes here, mid-stream
                    }
                    out.write((l + "\n").getBytes(StandardCharsets.UTF_8));
                    out.flush();
                    if (l.startsWith("data:")) events++;
                }
            }
        } catch (IOException | RuntimeException e) {
            // a client that went away: nothing to do
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static String line(InputStream in) throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        for (int c = in.read(); c != -1 && c != '\n'; c = in.read()) if (c != '\r') b.write(c);
        return b.toString(StandardCharsets.US_ASCII);
    }

    @Override
    public void close() throws IOException {
        closed.countDown();
        server.close();
        acceptor.interrupt();
        http.shutdownNow();
    }
}
