package dgr.tracker.ledger;

import java.nio.file.Files;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Fresh ledger databases for tests, of either kind: an SQLite file in a new folder, or a new database on
 * one real PostgreSQL server per test run (started on first use, stopped by handle when the run ends).
 * Register with {@code @RegisterExtension static final TestDatabases DBS = new TestDatabases();}.
 */
public final class TestDatabases implements BeforeAllCallback {
    private RealPostgres postgres;

    @Override
    public void beforeAll(ExtensionContext context) {
        postgres = context.getRoot().getStore(ExtensionContext.Namespace.GLOBAL)
                .getOrComputeIfAbsent(RealPostgres.class, k -> new Server(), Server.class).pg;
    }

    /** The JDBC URL of a new, empty database of this kind. */
    public String newUrl(LedgerDatabase.Kind kind) throws Exception {
        return switch (kind) {
            case SQLITE -> LedgerDatabase.sqliteUrl(Files.createTempDirectory("dgr-ledger-test-").resolve("ledger.db"));
            case POSTGRESQL -> postgres.newDatabase();
        };
    }

    public LedgerDatabase open(LedgerDatabase.Kind kind) throws Exception {
        return LedgerDatabase.open(newUrl(kind));
    }

    /** Keeps the server in JUnit's root store, which closes it once every test of the run has finished. */
    private static final class Server implements ExtensionContext.Store.CloseableResource, AutoCloseable {
        final RealPostgres pg;

        Server() {
            try {
                pg = RealPostgres.start();
            } catch (Exception e) {
                throw new IllegalStateException("cannot start the test PostgreSQL: " + e.getMessage(), e);
            }
        }

        @Override
        public void close() throws Exception { pg.close(); }
    }

}
