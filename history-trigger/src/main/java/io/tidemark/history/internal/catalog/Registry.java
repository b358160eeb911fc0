package io.tidemark.history.internal.catalog;

import io.tidemark.sync.internal.jdbc.Jdbc;
import io.tidemark.history.internal.ddl.HistorySql;
import io.tidemark.sync.internal.sql.PgName;
import io.tidemark.sync.internal.sql.SqlTemplate;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.util.List;
import java.util.Optional;

/** Reads and writes {@code tidemark.temporal_tables}. */
public final class Registry {

    private static final String SELECT = registrySql("""
            SELECT source_schema, source_table, history_schema, history_table,
                   key_columns::text, versioned_columns::text, orphan_columns::text, options::text, function_hash
              FROM {{registry}}""");
    private static final String DELETE = registrySql("""
            DELETE FROM {{registry}} WHERE source_schema = ? AND source_table = ?""");
    private static final String ADVANCE_HORIZON = registrySql("""
            UPDATE {{registry}} SET pruned_before = GREATEST(pruned_before, ?)
             WHERE source_schema = ? AND source_table = ?
            RETURNING pruned_before""");

    private Registry() {
    }

    /** Whether the registry table exists (it is created by the first install). */
    public static boolean exists(Connection c) throws SQLException {
        return !Jdbc.query(c, """
                SELECT 1 FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
                 WHERE n.nspname = 'tidemark' AND c.relname = 'temporal_tables'""", rs -> 1).isEmpty();
    }

    /** Serialises concurrent installers around creating the registry. */
    public static void lockForCreate(Connection c) throws SQLException {
        Jdbc.query(c, "SELECT pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtext('tidemark.temporal_tables'))",
                rs -> 1);
    }

    public static Optional<RegistryEntry> find(Connection c, PgName table) throws SQLException {
        if (!exists(c)) {
            return Optional.empty();
        }
        return findExisting(c, table);
    }

    /** {@link #find} when the registry is known to exist: one round trip instead of two. */
    public static Optional<RegistryEntry> findExisting(Connection c, PgName table) throws SQLException {
        return first(Jdbc.query(c, SELECT + " WHERE source_schema = ? AND source_table = ?", Registry::map,
                table.schema().orElseThrow(), table.name()));
    }

    public static Optional<RegistryEntry> findByHistory(Connection c, PgName history) throws SQLException {
        if (!exists(c)) {
            return Optional.empty();
        }
        return first(Jdbc.query(c, SELECT + " WHERE history_schema = ? AND history_table = ?", Registry::map,
                history.schema().orElseThrow(), history.name()));
    }

    public static void delete(Connection c, PgName table) throws SQLException {
        Jdbc.update(c, DELETE,
                table.schema().orElseThrow(), table.name());
    }

    /** Moves the horizon forward (never back) and returns it. */
    public static Timestamp advanceHorizon(Connection c, PgName table, Timestamp cutoff) throws SQLException {
        return Jdbc.query(c, ADVANCE_HORIZON, rs -> rs.getTimestamp(1), cutoff, table.schema().orElseThrow(), table.name()).get(0);
    }

    private static String registrySql(String template) {
        return SqlTemplate.of(template).with("registry", HistorySql.REGISTRY).render();
    }

    private static <T> Optional<T> first(List<T> rows) {
        return rows.isEmpty() ? Optional.empty() : Optional.of(rows.get(0));
    }

    private static RegistryEntry map(java.sql.ResultSet rs) throws SQLException {
        return new RegistryEntry(PgName.of(rs.getString(1), rs.getString(2)), PgName.of(rs.getString(3),
                rs.getString(4)), RegistryEntry.parseNames(rs.getString(5)), RegistryEntry.parseColumns(rs.getString(6)),
                RegistryEntry.parseColumns(rs.getString(7)), rs.getString(8), rs.getString(9));
    }
}
