package dgr.cli;

import dgr.tracker.ledger.LedgerDatabase;
import java.io.PrintStream;
import picocli.CommandLine.Option;

/** {@code --db URL}: the tracker's ledger database, shared by {@code dgr tracker} and its subcommands. */
final class LedgerOptions {
    @Option(names = "--db", description = "ledger database: jdbc:sqlite:PATH or jdbc:postgresql://HOST:PORT/DB?user=U"
            + " (several trackers share one PostgreSQL); default: an SQLite file under the user's data directory"
            + " ($XDG_DATA_HOME/dgr/ledger.db, else ~/.local/share/dgr/ledger.db)")
    String db;

    /** The JDBC URL to open: --db, or the default SQLite file. */
    String url() {
        return db != null ? db : LedgerDatabase.sqliteUrl(LedgerDatabase.defaultSqliteFile());
    }

    /** Opens and migrates the ledger, saying on {@code err} where it is. */
    LedgerDatabase open(PrintStream err, String who) {
        LedgerDatabase d = LedgerDatabase.open(url());
        err.println(who + ": ledger " + (db == null ? "(SQLite, the default) at " + LedgerDatabase.defaultSqliteFile()
                : "at " + d.url()));
        return d;
    }
}
