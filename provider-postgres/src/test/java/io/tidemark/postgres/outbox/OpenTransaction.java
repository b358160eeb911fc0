package io.tidemark.postgres.outbox;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * A transaction on its own connection that a test drives step by step, to build exact interleavings with other
 * transactions. Closing it rolls back whatever was not committed.
 */
final class OpenTransaction implements AutoCloseable {

    private final Connection connection;

    private OpenTransaction(Connection connection) {
        this.connection = connection;
    }

    static OpenTransaction begin(DataSource dataSource) {
        try {
            Connection c = dataSource.getConnection();
            c.setAutoCommit(false);
            return new OpenTransaction(c);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    OpenTransaction execute(String sql) {
        try (Statement s = connection.createStatement()) {
            s.execute(sql);
            return this;
        } catch (SQLException e) {
            throw new IllegalStateException(sql, e);
        }
    }

    /** Assigns the transaction its id now (as a first write would) and returns it. */
    long takeXid() {
        try (Statement s = connection.createStatement();
             ResultSet rs = s.executeQuery("SELECT pg_current_xact_id()::text::bigint")) {
            rs.next();
            return rs.getLong(1);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    int pid() {
        try (Statement s = connection.createStatement(); ResultSet rs = s.executeQuery("SELECT pg_backend_pid()")) {
            rs.next();
            return rs.getInt(1);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    void commit() {
        try {
            connection.commit();
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    void rollback() {
        try {
            connection.rollback();
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public void close() {
        try {
            connection.rollback();
            connection.close();
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }
}
