package dgr.node;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dgr.node.http.ListenerLimits;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A real descriptor exhaustion: the test lowers this process's open-file limit (setrlimit, the
 * same call as {@code ulimit -n}), fills what is left, and lets one client connect, so Helidon's
 * accept fails with "Too many open files" and its listener stops. Once descriptors are free again
 * the node listens again on the same port, and {@code dgr_listener_restarts_total} counts it.
 */
class ListenerRestartTest {
    private static final int RLIMIT_NOFILE = 7; // Linux, every architecture the JDK ships for

    @Test
    void theListenerStartsAgainOnTheSamePortAfterAcceptRanOutOfFileDescriptors() throws Throwable {
        assumeTrue(System.getProperty("os.name").equals("Linux"), "setrlimit(RLIMIT_NOFILE) as on Linux");
        NodeServer node = NodeServer.start(TestNodes.config(), ListenerLimits.defaults().withMaxConnections(64)
                .withIdleTimeout(Duration.ofSeconds(60)));
        try {
            Http http = new Http(node);
            int port = node.port();
            // Served once before: every class a connection needs is loaded, and every jar it comes from open (the
            // class path drops a jar it cannot open for good, and under the limit it could not).
            assertThat(http.get("/health").statusCode()).isEqualTo(200);
            assertThat(restarts(http)).isZero();
            long[] saved = getLimit();
            List<FileChannel> fillers = new ArrayList<>();
            Socket victim = new Socket();
            try {
                setLimit(openDescriptors() + 32, saved[1]);
                try {
                    while (fillers.size() < 100_000) fillers.add(FileChannel.open(Path.of("/dev/null")));
                } catch (IOException full) {
                    // every descriptor the limit allows is taken
                }
                // One descriptor for the client: its connection completes in the kernel, and accept finds none.
                fillers.removeLast().close();
                victim.connect(new InetSocketAddress("127.0.0.1", port), 5000);
                victim.setSoTimeout(10_000);
                // Helidon stops its listener when accept fails: closing the socket resets the queued connection.
                int read;
                try {
                    read = victim.getInputStream().read();
                } catch (SocketTimeoutException served) {
                    throw new AssertionError("accept did not run out of descriptors: the connection was served", served);
                } catch (SocketException reset) {
                    read = -1;
                }
                assertThat(read).isEqualTo(-1);
            } finally {
                for (FileChannel f : fillers) f.close();
                victim.close();
                setLimit(saved[0], saved[1]);
            }
            long end = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (restarts(http) < 1) {
                if (System.nanoTime() > end) throw new AssertionError("the listener did not start again within 30 s");
                Thread.sleep(20);
            }
            assertThat(node.port()).isEqualTo(port);
            assertThat(http.get("/health").statusCode()).isEqualTo(200);
            assertThat(restarts(http)).isEqualTo(1);
        } finally {
            node.close();
        }
    }

    /** The restart counter, read over HTTP (a connection refused while the listener is down reads as 0). */
    private static double restarts(Http http) {
        try {
            return PromText.parse(http.get("/metrics").body()).value("dgr_listener_restarts_total", Map.of());
        } catch (RuntimeException down) {
            return 0;
        }
    }

    private static long openDescriptors() {
        return ((com.sun.management.UnixOperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getOpenFileDescriptorCount();
    }

    private static final Linker LINKER = Linker.nativeLinker();
    private static final MethodHandle GETRLIMIT = LINKER.downcallHandle(LINKER.defaultLookup().find("getrlimit").orElseThrow(),
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS));
    private static final MethodHandle SETRLIMIT = LINKER.downcallHandle(LINKER.defaultLookup().find("setrlimit").orElseThrow(),
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS));

    /** {soft, hard} open-file limits of this process. */
    private static long[] getLimit() throws Throwable {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment rl = a.allocate(16, 8);
            int rc = (int) GETRLIMIT.invokeExact(RLIMIT_NOFILE, rl);
            assertThat(rc).as("getrlimit").isZero();
            return new long[] {rl.get(JAVA_LONG, 0), rl.get(JAVA_LONG, 8)};
        }
    }

    private static void setLimit(long soft, long hard) throws Throwable {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment rl = a.allocate(16, 8);
            rl.set(JAVA_LONG, 0, soft);
            rl.set(JAVA_LONG, 8, hard);
            int rc = (int) SETRLIMIT.invokeExact(RLIMIT_NOFILE, rl);
            assertThat(rc).as("setrlimit").isZero();
        }
    }
}
