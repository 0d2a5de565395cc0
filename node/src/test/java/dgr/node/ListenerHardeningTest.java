package dgr.node;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dgr.node.http.ListenerLimits;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The listener's defences, over raw sockets: malformed HTTP framing is a 4xx in OpenAI's shape, idle
 * and slow-head connections are cut off, the connection cap holds, and a non-streaming request
 * whose client leaves is cancelled at once.
 */
class ListenerHardeningTest {
    static NodeServer node;
    static Http http;

    @BeforeAll
    static void start() throws IOException {
        node = NodeServer.start(TestNodes.config(), ListenerLimits.defaults().withMaxConnections(8)
                .withIdleTimeout(Duration.ofMillis(4000)).withHeaderTimeout(Duration.ofMillis(1000)));
        http = new Http(node);
    }

    @AfterAll
    static void stop() { node.close(); }

    private static Socket connect() throws IOException {
        Socket s = new Socket("127.0.0.1", node.port());
        s.setSoTimeout(20_000);
        return s;
    }

    /** Everything the server sends until it closes (or the read times out). */
    private static String readAll(Socket s) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        InputStream in = s.getInputStream();
        byte[] buf = new byte[4096];
        try {
            for (int n; (n = in.read(buf)) > 0; ) out.write(buf, 0, n);
        } catch (SocketException reset) {
            // a reset after the answer still leaves the answer read
        }
        return out.toString(StandardCharsets.UTF_8);
    }

    private static void assertOpenAi4xx(String response, String what) throws IOException {
        assertOpenAiError(response, what, "4");
    }

    private static void assertOpenAiError(String response, String what, String statusPrefix) throws IOException {
        assertThat(response).as(what).startsWith("HTTP/1.1 " + statusPrefix);
        assertThat(response).as(what).containsIgnoringCase("content-type: application/json");
        String body = response.substring(response.indexOf("\r\n\r\n") + 4);
        JsonNode e = Http.JSON.readTree(body).get("error");
        assertThat(e).as(what + ": " + body).isNotNull();
        assertThat(e.get("message").asText()).isNotBlank();
        assertThat(e.get("type").asText()).isEqualTo("invalid_request_error");
        assertThat(body).doesNotContain("Exception", "\tat ");
    }

    private static final String POST = "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n";
    private static final String JSON = "{\"model\":\"llama-tiny\",\"prompt\":\"a\",\"max_tokens\":2}";

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "chunk size not hex      | TE  | ZZ\\r\\nabc\\r\\n0\\r\\n\\r\\n",
            "chunk size overflowing  | TE  | FFFFFFFFFFFFFFFFFFFF\\r\\nabc\\r\\n0\\r\\n\\r\\n",
            "body shorter than length| CL  | {\"model\":",
            "chunked body cut short  | TE  | 40\\r\\n{\"model\":",
            "garbage request line    | RAW | GARBAGE\\r\\n\\r\\n",
            "header without colon    | RAW | POST /v1/completions HTTP/1.1\\r\\nHost: x\\r\\nNoColonHere\\r\\n\\r\\n",
            "length not a number     | RAW | POST /v1/completions HTTP/1.1\\r\\nHost: x\\r\\nContent-Length: abc\\r\\n\\r\\n",
            "length and chunked      | RAW | POST /v1/completions HTTP/1.1\\r\\nHost: x\\r\\nContent-Length: 3\\r\\nTransfer-Encoding: chunked\\r\\n\\r\\n0\\r\\n\\r\\n",
            "head cut short then FIN | RAW | POST /v1/completions HTTP/1.1\\r\\nHost: x\\r\\nContent-Le",
    })
    void malformedFramingIsA4xxInOpenAiShapeNeverA500(String name, String mode, String payload) throws IOException {
        String p = payload.replace("\\r\\n", "\r\n");
        String request = switch (mode.trim()) {
            case "TE" -> POST + "Transfer-Encoding: chunked\r\n\r\n" + p;
            case "CL" -> POST + "Content-Length: 100\r\n\r\n" + p;
            default -> p;
        };
        try (Socket s = connect()) {
            OutputStream out = s.getOutputStream();
            out.write(request.getBytes(StandardCharsets.UTF_8));
            out.flush();
            s.shutdownOutput(); // FIN: whatever was cut short stays short
            assertOpenAi4xx(readAll(s), name);
        }
        assertThat(http.get("/health").statusCode()).isEqualTo(200);
    }

    /** The corpus's requests that are not plain text: built here, keyed by name. */
    private static byte[] corpusRequest(String name) {
        String head = POST + "Connection: close\r\n"; // the answer ends the exchange
        return switch (name) {
            case "invalid UTF-8 in JSON" -> {
                byte[] b = "{\"model\":\"llama-tiny\",\"prompt\":\"\u00ff\"}".getBytes(StandardCharsets.ISO_8859_1);
                yield concat(head + "Content-Length: " + b.length + "\r\n\r\n", b, b.length);
            }
            case "UTF-16 body with BOM" -> {
                byte[] b = ("\ufeff" + JSON).getBytes(StandardCharsets.UTF_16LE);
                yield concat(head + "Content-Length: " + b.length + "\r\n\r\n", b, b.length);
            }
            case "UTF-16 body without BOM" -> {
                byte[] b = JSON.getBytes(StandardCharsets.UTF_16BE);
                yield concat(head + "Content-Length: " + b.length + "\r\n\r\n", b, b.length);
            }
            case "UTF-32 body" -> {
                byte[] b = JSON.getBytes(java.nio.charset.Charset.forName("UTF-32LE"));
                yield concat(head + "Content-Length: " + b.length + "\r\n\r\n", b, b.length);
            }
            case "charset=utf-16 declared" -> ((head + "Content-Type: application/json; charset=utf-16\r\nContent-Length: "
                    + JSON.length() + "\r\n\r\n" + JSON).replace("Content-Type: application/json\r\n", "")).getBytes(StandardCharsets.UTF_8);
            case "NUL bytes in JSON" -> {
                byte[] b = "{\"model\":\"llama-tiny\",\u0000\"prompt\":\"a\"}".getBytes(StandardCharsets.UTF_8);
                yield concat(head + "Content-Length: " + b.length + "\r\n\r\n", b, b.length);
            }
            case "JSON nested 100k deep" -> {
                String b = "[".repeat(100_000) + "]".repeat(100_000);
                yield (head + "Content-Length: " + b.length() + "\r\n\r\n" + b).getBytes(StandardCharsets.UTF_8);
            }
            case "declared body over the limit" -> (head + "Content-Length: 999999999999\r\n\r\n{").getBytes(StandardCharsets.UTF_8);
            case "chunked body over the limit" -> {
                StringBuilder sb = new StringBuilder(head + "Transfer-Encoding: chunked\r\n\r\n");
                String chunk = "x".repeat(65536);
                for (int i = 0; i < 80; i++) sb.append("10000\r\n").append(chunk).append("\r\n"); // 5 MiB > 4 MiB
                yield sb.append("0\r\n\r\n").toString().getBytes(StandardCharsets.UTF_8);
            }
            case "headers over 16 KiB" -> (head + "X-Big: " + "a".repeat(20_000) + "\r\nContent-Length: 2\r\n\r\n{}").getBytes(StandardCharsets.UTF_8);
            case "request line over 4 KiB" -> ("GET /" + "a".repeat(5000) + " HTTP/1.1\r\nHost: x\r\n\r\n").getBytes(StandardCharsets.UTF_8);
            case "gzip-encoded garbage" -> (head + "Content-Encoding: gzip\r\nContent-Length: 10\r\n\r\nnot-gzip!!").getBytes(StandardCharsets.UTF_8);
            case "unknown transfer coding" -> (head + "Transfer-Encoding: zstd, chunked\r\n\r\n0\r\n\r\n").getBytes(StandardCharsets.UTF_8);
            case "HTTP/1.0 request" -> "GET /health HTTP/1.0\r\n\r\n".getBytes(StandardCharsets.UTF_8);
            case "NUL in a header value" -> (head + "X-A: a\u0000b\r\nContent-Length: 2\r\n\r\n{}").getBytes(StandardCharsets.UTF_8);
            case "bare LF line endings" -> ("POST /v1/completions HTTP/1.1\nHost: x\nContent-Length: 2\n\n{}").getBytes(StandardCharsets.UTF_8);
            default -> throw new IllegalArgumentException(name);
        };
    }

    private static byte[] concat(String head, byte[] body, int declared) {
        byte[] h = head.getBytes(StandardCharsets.UTF_8);
        byte[] out = java.util.Arrays.copyOf(h, h.length + body.length);
        System.arraycopy(body, 0, out, h.length, body.length);
        return out;
    }

    /** The HTTP bad-input corpus's encodings and sizes (JSON fields: ErrorResponsesTest; framing: above). */
    @ParameterizedTest(name = "{0}")
    @org.junit.jupiter.params.provider.ValueSource(strings = {"invalid UTF-8 in JSON", "UTF-16 body with BOM",
            "UTF-16 body without BOM", "UTF-32 body", "charset=utf-16 declared",
            "NUL bytes in JSON", "JSON nested 100k deep", "declared body over the limit", "chunked body over the limit",
            "headers over 16 KiB", "request line over 4 KiB", "gzip-encoded garbage", "unknown transfer coding",
            "HTTP/1.0 request", "NUL in a header value", "bare LF line endings"})
    void everyMalformedEncodingOrSizeIsA4xxInOpenAiShape(String name) throws IOException {
        try (Socket s = connect()) {
            OutputStream out = s.getOutputStream();
            try {
                out.write(corpusRequest(name)); // complete requests: no FIN, the server answers and closes
                out.flush();
            } catch (SocketException refusedMidBody) {
                // the server answered and closed before the whole body went out (413): read the answer
            }
            String response = readAll(s);
            switch (name) {
                // HTTP/1.0 is answered (200) or refused with a 4xx/505, never a 500 or silence.
                case "HTTP/1.0 request" -> assertThat(response).as(name).matches("(?s)HTTP/1\\.[01] (200|4\\d\\d|505) .*");
                // JSON bodies are UTF-8 (RFC 8259): any other encoding is a 400 that names it.
                case "UTF-16 body with BOM" -> assertEncodingRefused(response, name, "UTF-16LE");
                case "UTF-16 body without BOM" -> assertEncodingRefused(response, name, "UTF-16BE");
                case "UTF-32 body" -> assertEncodingRefused(response, name, "UTF-32LE");
                case "charset=utf-16 declared" -> assertEncodingRefused(response, name, "charset=utf-16");
                case "invalid UTF-8 in JSON" -> assertEncodingRefused(response, name, "not valid UTF-8");
                // RFC 9112: a transfer coding the server does not know is a 501, in the same error shape.
                case "unknown transfer coding" -> assertOpenAiError(response, name, "501");
                default -> assertOpenAi4xx(response, name);
            }
        }
        assertThat(http.get("/health").statusCode()).isEqualTo(200);
    }

    private static void assertEncodingRefused(String response, String what, String named) throws IOException {
        assertThat(response).as(what).startsWith("HTTP/1.1 400");
        assertOpenAi4xx(response, what);
        JsonNode e = Http.JSON.readTree(response.substring(response.indexOf("\r\n\r\n") + 4)).get("error");
        assertThat(e.get("message").asText()).as(what).contains(named).contains("UTF-8");
    }

    @Test
    void aConnectionThatSendsNothingIsClosedAfterTheIdleTimeout() throws IOException {
        try (Socket s = connect()) {
            long t0 = System.nanoTime();
            assertThat(s.getInputStream().read()).isEqualTo(-1);
            assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(10));
        }
    }

    @Test
    void aHeadTrickledSlowerThanTheHeaderTimeoutIsCutOff() throws Exception {
        try (Socket s = connect()) {
            OutputStream out = s.getOutputStream();
            out.write(POST.getBytes(StandardCharsets.UTF_8));
            long t0 = System.nanoTime();
            boolean cut = false;
            // One header byte every 200 ms: each read is quick, the head never ends.
            for (int i = 0; i < 100 && !cut; i++) {
                try {
                    out.write('X');
                    out.flush();
                    Thread.sleep(200);
                    cut = s.getInputStream().available() > 0 || isClosed(s);
                } catch (IOException e) {
                    cut = true;
                }
            }
            assertThat(cut).isTrue();
            assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(10));
        }
    }

    private static boolean isClosed(Socket s) throws IOException {
        s.setSoTimeout(1);
        try {
            return s.getInputStream().read() == -1;
        } catch (java.net.SocketTimeoutException stillOpen) {
            return false;
        } finally {
            s.setSoTimeout(20_000);
        }
    }

    @Test
    void aRequestLineTrickledSlowerThanTheHeaderTimeoutIsCutOffBeforeTheIdleTimeout() throws Exception {
        try (Socket s = connect()) {
            OutputStream out = s.getOutputStream();
            long t0 = System.nanoTime();
            boolean cut = false;
            // The request line itself, one byte every 100 ms: it never ends, and Helidon never sees a request.
            byte[] line = ("POST /v1/completions?" + "a".repeat(200)).getBytes(StandardCharsets.UTF_8);
            for (int i = 0; i < line.length && !cut; i++) {
                try {
                    out.write(line[i]);
                    out.flush();
                    Thread.sleep(100);
                    cut = s.getInputStream().available() > 0 || isClosed(s);
                } catch (IOException e) {
                    cut = true;
                }
            }
            assertThat(cut).isTrue();
            // The header timeout (1 s) from the first byte, well before the idle timeout (4 s).
            assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofMillis(3000));
        }
        assertThat(http.get("/health").statusCode()).isEqualTo(200);
    }

    /** Sends GET /health on a kept-alive connection and reads one whole answer. */
    private static String exchange(Socket s) throws IOException {
        s.getOutputStream().write("GET /health HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        s.getOutputStream().flush();
        InputStream in = s.getInputStream();
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        while (!head.toString(StandardCharsets.US_ASCII).endsWith("\r\n\r\n")) {
            int b = in.read();
            if (b < 0) break;
            head.write(b);
        }
        String h = head.toString(StandardCharsets.US_ASCII);
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("(?i)content-length: *(\\d+)").matcher(h);
        return h + (m.find() ? new String(in.readNBytes(Integer.parseInt(m.group(1))), StandardCharsets.UTF_8) : "");
    }

    @Test
    void aConnectionOverTheCapIsAnswered503AtOnceAndTheListenerKeepsServing() throws Exception {
        double refusedBefore = metric("dgr_connections_refused_total", Map.of());
        List<Socket> held = new ArrayList<>();
        String refusal = null;
        long refusedInNanos = 0;
        try {
            for (int i = 0; i < 40 && refusal == null; i++) {
                long t0 = System.nanoTime();
                Socket s = connect();
                held.add(s);
                String answer = exchange(s);
                if (answer.startsWith("HTTP/1.1 503")) {
                    refusal = answer;
                    refusedInNanos = System.nanoTime() - t0;
                } else {
                    assertThat(answer).startsWith("HTTP/1.1 200"); // served, and kept open
                }
            }
            assertThat(held.size() - 1).as("connections served before the refusal").isLessThanOrEqualTo(8);
            assertThat(refusal).as("a refusal within 40 connections").isNotNull();
            assertThat(refusal).containsIgnoringCase("connection: close").containsIgnoringCase("retry-after: 1");
            assertThat(Duration.ofNanos(refusedInNanos)).isLessThan(Duration.ofSeconds(2));
            JsonNode e = Http.JSON.readTree(refusal.substring(refusal.indexOf("\r\n\r\n") + 4)).get("error");
            assertThat(e.get("code").asText()).isEqualTo("too_many_connections");
            assertThat(e.get("type").asText()).isEqualTo("server_error");
            assertThat(isClosedWithin(held.getLast(), Duration.ofSeconds(2))).as("the refused connection is closed").isTrue();
        } finally {
            for (Socket s : held) s.close();
        }
        // The slots free as the held sockets close; the listener keeps serving.
        awaitUntil(() -> http.get("/health").statusCode() == 200);
        assertThat(metric("dgr_connections_refused_total", Map.of())).isGreaterThanOrEqualTo(refusedBefore + 1);
    }

    private static boolean isClosedWithin(Socket s, Duration d) throws IOException {
        s.setSoTimeout((int) d.toMillis());
        try {
            return s.getInputStream().read() == -1;
        } catch (java.net.SocketTimeoutException stillOpen) {
            return false;
        } catch (SocketException reset) {
            return true;
        }
    }

    @Test
    void anAbandonedNonStreamingRequestIsCancelledAtOnce() throws Exception {
        double cancelledBefore = metric("dgr_requests_total", Map.of("model", "llama-tiny", "outcome", "cancelled"));
        String body = "{\"model\":\"llama-tiny\",\"prompt\":\"Once\",\"max_tokens\":500,\"ignore_eos\":true}";
        try (Socket s = connect()) {
            s.getOutputStream().write((POST + "Content-Length: " + body.length() + "\r\n\r\n" + body)
                    .getBytes(StandardCharsets.UTF_8));
            s.getOutputStream().flush();
            awaitUntil(() -> metric("dgr_num_requests_running", Map.of("model", "llama-tiny")) == 1);
        } // the client leaves mid-generation
        awaitUntil(() -> metric("dgr_num_requests_running", Map.of("model", "llama-tiny")) == 0);
        // Cancelled, not run out to its 500 tokens (outcome "length").
        assertThat(metric("dgr_requests_total", Map.of("model", "llama-tiny", "outcome", "cancelled")))
                .isEqualTo(cancelledBefore + 1);
    }

    private static double metric(String name, Map<String, String> labels) {
        return PromText.parse(http.get("/metrics").body()).value(name, labels);
    }

    private static void awaitUntil(java.util.function.BooleanSupplier c) throws InterruptedException {
        long end = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (!c.getAsBoolean()) {
            if (System.nanoTime() > end) throw new AssertionError("condition not met within 30 s");
            Thread.sleep(5);
        }
    }
}
