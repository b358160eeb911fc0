package io.tidemark.sync.internal.jdbc;

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

/**
 * Work on a data source with its failures mapped: a connection is taken, the work runs in one transaction
 * ({@link Transactions}), and a {@link SQLException} becomes a {@link TidemarkException} by the shared rules
 * ({@link SqlErrors#map}). Also the few statement helpers the installers and queries share.
 */
public final class Jdbc {

    /** A row reader. */
    @FunctionalInterface
    public interface RowMapper<T> {
        T map(ResultSet rs) throws SQLException;
    }

    /** Maps a failure of work that ran in {@code context}; {@link SqlErrors#map} with the caller's remedies. */
    @FunctionalInterface
    public interface FailureMapper {
        TidemarkException map(SQLException e, SqlContext context);
    }

    private Jdbc() {
    }

    /** A mapper by the shared rules: {@code permissionRemedy} for a missing privilege, else {@code otherwise}. */
    public static FailureMapper failures(String permissionRemedy, ErrorCode otherwise) {
        return (e, context) -> SqlErrors.map(e, context, permissionRemedy, otherwise);
    }

    /** Runs {@code work} in one committed transaction at the connection's isolation. */
    public static <T> T inTransaction(DataSource dataSource, SqlContext context, FailureMapper failures,
                                      JdbcWork<T> work) {
        return inTransaction(dataSource, Transactions.CONNECTION_ISOLATION, context, failures, work);
    }

    /** Runs {@code work} in one committed transaction at {@code isolation}. */
    public static <T> T inTransaction(DataSource dataSource, int isolation, SqlContext context,
                                      FailureMapper failures, JdbcWork<T> work) {
        try (Connection c = dataSource.getConnection()) {
            return Transactions.inTransaction(c, isolation, work);
        } catch (SQLException e) {
            throw failures.map(e, context);
        }
    }

    /** Runs read-only {@code work} in a transaction that is rolled back. */
    public static <T> T readOnly(DataSource dataSource, SqlContext context, FailureMapper failures,
                                 JdbcWork<T> work) {
        try (Connection c = dataSource.getConnection()) {
            return Transactions.rolledBack(c, work);
        } catch (SQLException e) {
            throw failures.map(e, context);
        }
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
            bind(ps, params);
            try (ResultSet rs = ps.executeQuery()) {
                List<T> rows = new ArrayList<>();
                while (rs.next()) {
                    rows.add(mapper.map(rs));
                }
                return rows;
            }
        }
    }

    /** Runs a parameterised query that returns one row with one boolean (an existence test) and returns it. */
    public static boolean queryBoolean(Connection c, String sql, Object... params) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            bind(ps, params);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getBoolean(1);
            }
        }
    }

    public static int update(Connection c, String sql, Object... params) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            bind(ps, params);
            return ps.executeUpdate();
        }
    }

    private static void bind(PreparedStatement ps, Object... params) throws SQLException {
        for (int i = 0; i < params.length; i++) {
            ps.setObject(i + 1, params[i]);
        }
    }
}
