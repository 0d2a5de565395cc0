package dgr.tracker.ledger;

import java.sql.Connection;
import java.sql.SQLException;

/** Runs a unit of ledger work in one transaction: committed when it returns, rolled back when it throws. */
final class Transactions {
    private Transactions() {}

    /** Work inside a transaction; may throw the checked exceptions of the ledger's answers. */
    @FunctionalInterface
    interface Work<T, E extends Exception> {
        T run(Connection c) throws SQLException, E;
    }

    static <T, E extends Exception> T inTransaction(LedgerDatabase db, Work<T, E> work) throws E {
        try (Connection c = db.connection()) {
            c.setAutoCommit(false);
            try {
                T result = work.run(c);
                c.commit();
                return result;
            } catch (SQLException | RuntimeException e) {
                rollbackQuietly(c, e);
                throw e;
            } catch (Exception e) {
                rollbackQuietly(c, e);
                throw e;
            } finally {
                c.setAutoCommit(true);
            }
        } catch (SQLException e) {
            throw new LedgerException("ledger database error: " + e.getMessage(), e);
        }
    }

    /**
     * Read-only work on an autocommit connection: no transaction, so on SQLite it takes no write lock
     * (the ledger's transactions begin IMMEDIATE) and reads the last committed state.
     */
    static <T, E extends Exception> T read(LedgerDatabase db, Work<T, E> work) throws E {
        try (Connection c = db.connection()) {
            return work.run(c);
        } catch (SQLException e) {
            throw new LedgerException("ledger database error: " + e.getMessage(), e);
        }
    }

    private static void rollbackQuietly(Connection c, Exception cause) {
        try {
            c.rollback();
        } catch (SQLException r) {
            cause.addSuppressed(r);
        }
    }
}
