package io.tidemark.testing.internal;

import io.tidemark.sync.internal.sql.SqlTemplate;
import io.tidemark.testing.ProcedureContractVerifier.RowAction;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;

/**
 * One connection the verifier writes through: either each action commits at once, or the scenario drives a
 * transaction step by step (to build an interleaving with another session). Closing rolls back what is open.
 */
final class ContractSession implements AutoCloseable {

    /** A row action given to the verifier failed: the scenario cannot judge the function. */
    static final class ActionFailure extends RuntimeException {
        private static final long serialVersionUID = 1L;

        ActionFailure(String message, Throwable cause) {
            super(message, cause);
        }
    }

    private final String name;
    private final Connection connection;
    private final List<String> transcript;

    private ContractSession(String name, Connection connection, List<String> transcript) {
        this.name = name;
        this.connection = connection;
        this.transcript = transcript;
    }

    /**
     * @param transaction true to keep one transaction open until {@link #commit()}, false to commit every action
     */
    static ContractSession open(DataSource dataSource, String name, boolean transaction, int timeoutSeconds,
                                List<String> transcript) {
        try {
            Connection c = dataSource.getConnection();
            try (Statement s = c.createStatement()) {
                c.setAutoCommit(true);
                // Never wait forever on a lock the scenario itself holds.
                s.execute(SqlTemplate.of("SET statement_timeout = '{{seconds}}s'")
                        .with("seconds", timeoutSeconds).render());
                s.execute(SqlTemplate.of("SET lock_timeout = '{{seconds}}s'")
                        .with("seconds", timeoutSeconds).render());
            }
            c.setAutoCommit(!transaction);
            return new ContractSession(name, c, transcript);
        } catch (SQLException e) {
            throw new ActionFailure("could not open a connection for " + name + ": " + e.getMessage(), e);
        }
    }

    void run(String what, RowAction action, Object key) {
        try {
            action.apply(connection, key);
            transcript.add(name + ": " + what + " " + key);
        } catch (SQLException e) {
            throw new ActionFailure(name + ": the " + what + " action failed for key " + key + ": " + e.getMessage(), e);
        }
    }

    /** Makes the transaction take its id now, without writing anything, and returns it. */
    long takeTransactionId() {
        long xid = transactionId();
        transcript.add(name + ": takes transaction id " + xid);
        return xid;
    }

    /** The transaction's id, assigned now if it had none ({@code pg_current_xact_id()}). */
    long transactionId() {
        try (Statement s = connection.createStatement();
             ResultSet rs = s.executeQuery("SELECT pg_current_xact_id()::text::bigint")) {
            rs.next();
            return rs.getLong(1);
        } catch (SQLException e) {
            throw new ActionFailure(name + ": could not read its transaction id: " + e.getMessage(), e);
        }
    }

    void commit() {
        try {
            connection.commit();
            transcript.add(name + ": commits");
        } catch (SQLException e) {
            throw new ActionFailure(name + ": commit failed: " + e.getMessage(), e);
        }
    }

    @Override
    public void close() {
        try {
            if (!connection.getAutoCommit()) {
                connection.rollback();
            }
            connection.close();
        } catch (SQLException e) {
            // The connection is going away either way.
        }
    }
}
