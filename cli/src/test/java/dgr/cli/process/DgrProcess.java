package dgr.cli.process;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.regex.Pattern;

/**
 * A real {@code dgr} process for multi-process tests: the same JVM binary and class path as the
 * test, {@code dgr.cli.Main} with the given arguments, its output in a log file (never a pipe that
 * could fill and block it). Readiness is awaited ({@link #awaitHealthy}, {@link #awaitPort},
 * {@link #awaitLog}), never slept for. Stopped by handle: {@link #close} terminates it and, if it
 * does not exit promptly, kills it; {@link #kill9} is a real SIGKILL and {@link #suspend} a real
 * SIGSTOP, as an operator's {@code kill -9} / {@code kill -STOP} would be. A process that never becomes
 * ready is stopped by the wait that gave up on it.
 */
public final class DgrProcess implements AutoCloseable {
    private static final Duration POLL = Duration.ofMillis(25);
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();

    private final String name;
    private final Process process;
    private final Path log;

    private DgrProcess(String name, Process process, Path log) {
        this.name = name;
        this.process = process;
        this.log = log;
    }

    /**
     * Starts {@code dgr ARGS...} as a child process named {@code name} (used in the log file's name
     * and in failure messages). The log lives in {@code logDir}.
     */
    public static DgrProcess start(String name, Path logDir, List<String> args) {
        String java = ProcessHandle.current().info().command()
                .orElseThrow(() -> new IllegalStateException("cannot tell which java runs this test"));
        List<String> cmd = new ArrayList<>(List.of(java,
                "--add-modules", "jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED",
                "-XX:+UseParallelGC", "-XX:ObjectAlignmentInBytes=32", "-Xmx2g",
                // the launcher's engine JIT threshold (cli/src/dist/bin/dgr), so processes warm up as served ones do
                "-XX:CompileCommand=quiet", "-XX:CompileCommand=CompileThresholdScaling,dgr.engine.*::*,0.1",
                "-cp", System.getProperty("java.class.path"), "dgr.cli.Main"));
        cmd.addAll(args);
        try {
            Files.createDirectories(logDir);
            Path log = logDir.resolve(name + ".log");
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
            return new DgrProcess(name, p, log);
        } catch (IOException e) {
            throw new UncheckedIOException("could not start dgr process " + name + ": " + cmd, e);
        }
    }

    /** A TCP port on 127.0.0.1 that was free a moment ago. */
    public static int freePort() {
        try (ServerSocket s = new ServerSocket()) {
            s.setReuseAddress(true);
            s.bind(new InetSocketAddress("127.0.0.1", 0));
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public long pid() { return process.pid(); }

    public boolean isAlive() { return process.isAlive(); }

    public Path logFile() { return log; }

    /** Everything the process has printed so far. */
    public String log() {
        try {
            return Files.readString(log, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "(log unreadable: " + e + ")";
        }
    }

    /** Waits until {@code GET baseUrl + /health} answers 200. */
    public DgrProcess awaitHealthy(String baseUrl, Duration timeout) {
        HttpRequest req = HttpRequest.newBuilder(URI.create(baseUrl + "/health")).timeout(Duration.ofSeconds(1)).build();
        return await("GET " + baseUrl + "/health to answer 200", timeout, () -> {
            try {
                return HTTP.send(req, HttpResponse.BodyHandlers.discarding()).statusCode() == 200;
            } catch (IOException e) {
                return false;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        });
    }

    /** Waits until something accepts TCP connections on 127.0.0.1:{@code port} (a gRPC stage port, say). */
    public DgrProcess awaitPort(int port, Duration timeout) {
        return await("127.0.0.1:" + port + " to accept connections", timeout, () -> {
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress("127.0.0.1", port), 200);
                return true;
            } catch (IOException e) {
                return false;
            }
        });
    }

    /** Waits until the process's output contains a match of {@code regex}. */
    public DgrProcess awaitLog(String regex, Duration timeout) {
        Pattern p = Pattern.compile(regex);
        return await("output matching /" + regex + "/", timeout, () -> p.matcher(log()).find());
    }

    private DgrProcess await(String what, Duration timeout, BooleanSupplier ready) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!ready.getAsBoolean()) {
            if (!process.isAlive()) {
                throw new IllegalStateException(name + " exited with " + process.exitValue() + " while waiting for "
                        + what + "; its output:\n" + log());
            }
            if (System.nanoTime() > deadline) {
                // Stopped here, so a caller that never got the handle back (a chained start().await...()) leaks nothing.
                close();
                throw new IllegalStateException(name + " did not become ready within " + timeout + " (waiting for "
                        + what + "); its output:\n" + log());
            }
            try {
                Thread.sleep(POLL); // polling a condition another process will make true; not a wait for time
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for " + what, e);
            }
        }
        return this;
    }

    /** SIGKILL, as {@code kill -9}; returns once the process is gone. */
    public void kill9() {
        signal("KILL");
        waitGone(Duration.ofSeconds(10));
    }

    /** SIGSTOP, as {@code kill -STOP}: the process hangs with its sockets open. */
    public void suspend() { signal("STOP"); }

    /** SIGCONT after {@link #suspend}. */
    public void resume() { signal("CONT"); }

    private void signal(String sig) {
        try {
            Process kill = new ProcessBuilder("kill", "-" + sig, Long.toString(process.pid())).inheritIO().start();
            if (!kill.waitFor(5, TimeUnit.SECONDS) || kill.exitValue() != 0) {
                throw new IllegalStateException("kill -" + sig + " " + process.pid() + " failed");
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private boolean waitGone(Duration timeout) {
        try {
            return process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** Stops the process: SIGTERM (a resumed SIGCONT first, in case it was suspended), then SIGKILL after 10 s. */
    @Override
    public void close() {
        if (!process.isAlive()) return;
        try {
            signal("CONT");
        } catch (RuntimeException ignored) {
            // it may have exited in between: nothing to resume
        }
        process.destroy();
        if (!waitGone(Duration.ofSeconds(10))) {
            process.destroyForcibly();
            waitGone(Duration.ofSeconds(10));
        }
    }

    @Override
    public String toString() { return name + " (pid " + process.pid() + ")"; }
}
