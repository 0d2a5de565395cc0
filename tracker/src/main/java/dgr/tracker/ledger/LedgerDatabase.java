package dgr.tracker.ledger;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;

/**
 * The ledger's database: a pooled JDBC data source on SQLite (the embedded default) or PostgreSQL
 * (several trackers), migrated to the current schema by Flyway from {@code db/ledger/V*.sql} — the
 * same files on both.
 *
 * <p>SQLite runs in WAL mode with {@code synchronous=FULL}, so a committed transaction survives a
 * kill -9 of the process (and a power cut), and every transaction begins {@code IMMEDIATE}: it takes
 * the write lock up front, so two writers queue on the busy timeout instead of failing to upgrade.
 * PostgreSQL runs at READ COMMITTED; the ledger's budget guard is a conditional UPDATE, which
 * PostgreSQL re-checks on the locked row, so no stronger isolation is needed.
 */
public final class LedgerDatabase implements AutoCloseable {
    /** Which database a URL names. */
    public enum Kind { SQLITE, POSTGRESQL }

    private final HikariDataSource dataSource;
    private final Kind kind;
    private final String url;

    private LedgerDatabase(HikariDataSource dataSource, Kind kind, String url) {
        this.dataSource = dataSource;
        this.kind = kind;
        this.url = url;
    }

    /**
     * Opens (creating an SQLite file and its folder when needed) and migrates the database at a JDBC URL:
     * {@code jdbc:sqlite:PATH} or {@code jdbc:postgresql://HOST:PORT/DB?user=...}.
     */
    public static LedgerDatabase open(String jdbcUrl) {
        Kind kind = kindOf(jdbcUrl);
        HikariConfig c = new HikariConfig();
        c.setJdbcUrl(jdbcUrl);
        c.setPoolName("dgr-ledger");
        c.setConnectionTimeout(30_000);
        if (kind == Kind.SQLITE) {
            createParent(jdbcUrl.substring("jdbc:sqlite:".length()));
            c.addDataSourceProperty("journal_mode", "WAL");
            c.addDataSourceProperty("synchronous", "FULL");
            c.addDataSourceProperty("busy_timeout", "30000");
            c.addDataSourceProperty("transaction_mode", "IMMEDIATE");
            // Writers queue on SQLite's one write lock anyway; a few connections serve the readers.
            c.setMaximumPoolSize(4);
        } else {
            c.setMaximumPoolSize(8);
        }
        HikariDataSource ds = new HikariDataSource(c);
        try {
            Flyway.configure().loggers("slf4j").dataSource(ds).locations("classpath:db/ledger").load().migrate();
        } catch (RuntimeException e) {
            ds.close();
            throw new IllegalStateException("cannot migrate the ledger database at " + redact(jdbcUrl) + ": "
                    + e.getMessage(), e);
        }
        return new LedgerDatabase(ds, kind, jdbcUrl);
    }

    /**
     * The default SQLite file: {@code $XDG_DATA_HOME/dgr/ledger.db}, else {@code ~/.local/share/dgr/ledger.db}
     * (the user's data directory on Linux; the same path on macOS keeps one rule).
     */
    public static Path defaultSqliteFile() {
        String xdg = System.getenv("XDG_DATA_HOME");
        Path base = xdg != null && !xdg.isBlank() ? Path.of(xdg)
                : Path.of(System.getProperty("user.home"), ".local", "share");
        return base.resolve("dgr").resolve("ledger.db");
    }

    /** The JDBC URL of an SQLite file. */
    public static String sqliteUrl(Path file) { return "jdbc:sqlite:" + file.toAbsolutePath(); }

    static Kind kindOf(String jdbcUrl) {
        if (jdbcUrl == null) throw new IllegalArgumentException("a ledger database URL is required");
        if (jdbcUrl.startsWith("jdbc:sqlite:") && jdbcUrl.length() > "jdbc:sqlite:".length()) return Kind.SQLITE;
        if (jdbcUrl.startsWith("jdbc:postgresql:")) return Kind.POSTGRESQL;
        throw new IllegalArgumentException("--db must be jdbc:sqlite:PATH or jdbc:postgresql://HOST:PORT/DATABASE, got '"
                + redact(jdbcUrl) + "'");
    }

    /** The URL without a password, for messages and logs. */
    public static String redact(String jdbcUrl) {
        return jdbcUrl == null ? null : jdbcUrl.replaceAll("(?i)(password=)[^&;]*", "$1***");
    }

    private static void createParent(String file) {
        if (file.startsWith(":memory:") || file.startsWith("file:")) return;
        Path parent = Path.of(file).toAbsolutePath().getParent();
        try {
            if (parent != null) Files.createDirectories(parent);
        } catch (IOException e) {
            throw new IllegalStateException("cannot create the ledger's folder " + parent + ": " + e.getMessage(), e);
        }
    }

    public DataSource dataSource() { return dataSource; }

    public Kind kind() { return kind; }

    public String url() { return redact(url); }

    /** A pooled connection; the caller closes it. */
    Connection connection() throws SQLException { return dataSource.getConnection(); }

    @Override
    public void close() { dataSource.close(); }
}
