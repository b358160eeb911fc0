package io.tidemark.history.internal;

import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

/** Small JDBC helpers: one transaction around a piece of work, and error translation that names the object. */
public final class Jdbc {

    private Jdbc() {
    }

    /** Work that runs on one connection inside one transaction. */
    @FunctionalInterface
    public interface Work<T> {
        T run(Connection connection) throws SQLException;
    }

    /** A row reader. */
    @FunctionalInterface
    public interface RowMapper<T> {
        T map(ResultSet rs) throws SQLException;
    }

    /**
     * Runs {@code work} in one transaction and commits it; rolls back on any failure. SQL errors become
     * {@link TidemarkException}s about {@code object}, saying what {@code doing} was.
     */
    public static <T> T inTransaction(javax.sql.DataSource dataSource, String object, String doing, Work<T> work) {
        try (Connection c = dataSource.getConnection()) {
            boolean autoCommit = c.getAutoCommit();
            c.setAutoCommit(false);
            try {
                T result = work.run(c);
                c.commit();
                return result;
            } catch (SQLException | RuntimeException e) {
                rollbackQuietly(c, e);
                throw e;
            } finally {
                restoreAutoCommit(c, autoCommit);
            }
        } catch (SQLException e) {
            throw translate(e, object, doing);
        }
    }

    /** Runs read-only {@code work} in a transaction that is rolled back, so nothing it did can stay. */
    public static <T> T readOnly(DataSource dataSource, String object, String doing, Work<T> work) {
        try (Connection c = dataSource.getConnection()) {
            boolean autoCommit = c.getAutoCommit();
            c.setAutoCommit(false);
            try {
                return work.run(c);
            } finally {
                rollbackQuietly(c, null);
                restoreAutoCommit(c, autoCommit);
            }
        } catch (SQLException e) {
            throw translate(e, object, doing);
        }
    }

    public static TidemarkException translate(SQLException e, String object, String doing) {
        String state = e.getSQLState() == null ? "" : e.getSQLState();
        String detail = e.getMessage() + (state.isEmpty() ? "" : " (SQLState " + state + ")");
        if ("42501".equals(state)) {
            return TidemarkException.forObject(ErrorCode.PERMISSION_DENIED, object, doing + " failed: " + detail
                    + ". Run it as the role that owns the table (see the security model in the History README).", e);
        }
        return TidemarkException.forObject(ErrorCode.INTERNAL, object, doing + " failed: " + detail, e);
    }

    public static void execute(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }

    /** Runs a parameterised query and maps every row. */
    public static <T> List<T> query(Connection c, String sql, RowMapper<T> mapper, Object... params)
            throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < params.length; i++) {
                ps.setObject(i + 1, params[i]);
            }
            try (ResultSet rs = ps.executeQuery()) {
                List<T> rows = new ArrayList<>();
                while (rs.next()) {
                    rows.add(mapper.map(rs));
                }
                return rows;
            }
        }
    }

    public static int update(Connection c, String sql, Object... params) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < params.length; i++) {
                ps.setObject(i + 1, params[i]);
            }
            return ps.executeUpdate();
        }
    }

    private static void rollbackQuietly(Connection c, Exception primary) {
        try {
            c.rollback();
        } catch (SQLException e) {
            if (primary != null) {
                primary.addSuppressed(e);
            }
        }
    }

    private static void restoreAutoCommit(Connection c, boolean autoCommit) {
        try {
            c.setAutoCommit(autoCommit);
        } catch (SQLException ignored) {
            // The connection is being closed by the caller anyway; a broken one is discarded by the pool.
        }
    }
}
