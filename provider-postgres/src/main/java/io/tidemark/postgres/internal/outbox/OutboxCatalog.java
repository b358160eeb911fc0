package io.tidemark.postgres.internal.outbox;

import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.internal.sql.PgName;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads what the generator needs from the catalog: the table's columns (all of them unless a subset was
 * chosen) and its primary key (unless a key was declared). Checks made here fail with a message that says what
 * to change; the script's preflight repeats the essential ones for scripts run by a migration tool.
 */
public final class OutboxCatalog {

    private OutboxCatalog() {
    }

    /**
     * @param declaredKey     the key columns given to the builder, or null to use the primary key
     * @param declaredColumns the captured columns given to the builder, or null for every column
     * @param payloadKeys     column name to JSON key, for the columns that are renamed
     */
    public static OutboxShape resolve(Connection connection, PgName table, List<String> declaredKey,
                                      List<String> declaredColumns, Map<String, String> payloadKeys)
            throws SQLException {
        long oid = tableOid(connection, table);
        Map<String, String> generated = columns(connection, oid);
        List<String> key = declaredKey != null ? declaredKey : primaryKey(connection, oid, table);
        List<String> captured = new ArrayList<>();
        if (declaredColumns != null) {
            captured.addAll(declaredColumns);
        } else {
            // Virtual generated columns are NULL in triggers (PostgreSQL 18): not captured by default.
            generated.forEach((name, kind) -> {
                if (!"v".equals(kind)) {
                    captured.add(name);
                }
            });
        }
        List<String> wanted = new ArrayList<>(key);
        wanted.addAll(captured);
        for (String column : wanted) {
            String kind = generated.get(column);
            if (kind == null) {
                throw new TidemarkException(ErrorCode.SCHEMA_UNSUPPORTED, table.toString(), "Table " + table
                        + " has no column \"" + column + "\"; the columns are " + generated.keySet(), null);
            }
            if ("v".equals(kind)) {
                throw new TidemarkException(ErrorCode.SCHEMA_UNSUPPORTED, table.toString(), "Column \"" + column
                        + "\" of " + table + " is a virtual generated column, which is NULL in triggers; capture"
                        + " the columns it is computed from, or make it STORED", null);
            }
        }
        for (String renamed : payloadKeys.keySet()) {
            if (!key.contains(renamed) && !captured.contains(renamed)) {
                throw new TidemarkException(ErrorCode.INVALID_CONFIGURATION, table.toString(), "payloadKey names"
                        + " column \"" + renamed + "\" of " + table + ", which is neither the key " + key
                        + " nor captured " + captured, null);
            }
        }
        return OutboxShape.of(OutboxColumn.list(key, payloadKeys), OutboxColumn.list(captured, payloadKeys));
    }

    private static long tableOid(Connection connection, PgName table) throws SQLException {
        try (PreparedStatement s = connection.prepareStatement("""
                SELECT c.oid, c.relkind FROM pg_catalog.pg_class c
                JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = ? AND c.relname = ?""")) {
            s.setString(1, table.schema().orElseThrow());
            s.setString(2, table.name());
            try (ResultSet rs = s.executeQuery()) {
                if (!rs.next()) {
                    throw new TidemarkException(ErrorCode.SCHEMA_UNSUPPORTED, table.toString(), "Table " + table
                            + " does not exist (names are case-sensitive when quoted; an unqualified name means"
                            + " schema public)", null);
                }
                if (!"r".equals(rs.getString(2))) {
                    throw new TidemarkException(ErrorCode.SCHEMA_UNSUPPORTED, table.toString(), table
                            + " is not an ordinary table (relkind " + rs.getString(2) + "); the outbox captures"
                            + " ordinary tables (partitioned tables, views and foreign tables are not supported)",
                            null);
                }
                return rs.getLong(1);
            }
        }
    }

    /** Column name to {@code attgenerated} ('' for ordinary columns), in column order. */
    private static Map<String, String> columns(Connection connection, long oid) throws SQLException {
        Map<String, String> columns = new LinkedHashMap<>();
        try (PreparedStatement s = connection.prepareStatement("""
                SELECT a.attname, a.attgenerated::text
                FROM pg_catalog.pg_attribute a WHERE a.attrelid = ? AND a.attnum > 0 AND NOT a.attisdropped
                ORDER BY a.attnum""")) {
            s.setLong(1, oid);
            try (ResultSet rs = s.executeQuery()) {
                while (rs.next()) {
                    columns.put(rs.getString(1), rs.getString(2));
                }
            }
        }
        return columns;
    }

    private static List<String> primaryKey(Connection connection, long oid, PgName table) throws SQLException {
        List<String> key = new ArrayList<>();
        try (PreparedStatement s = connection.prepareStatement("""
                SELECT a.attname
                FROM pg_catalog.pg_index i
                CROSS JOIN LATERAL unnest(i.indkey::int2[]) WITH ORDINALITY AS k(attnum, ord)
                JOIN pg_catalog.pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
                WHERE i.indrelid = ? AND i.indisprimary AND k.ord <= i.indnkeyatts ORDER BY k.ord""")) {
            s.setLong(1, oid);
            try (ResultSet rs = s.executeQuery()) {
                while (rs.next()) {
                    key.add(rs.getString(1));
                }
            }
        }
        if (key.isEmpty()) {
            throw new TidemarkException(ErrorCode.SCHEMA_UNSUPPORTED, table.toString(), "Table " + table
                    + " has no primary key, so a delete could not say which row went. Add one, or declare the key"
                    + " with PostgresOutbox.Builder.key(...) naming the columns of a unique index over NOT NULL"
                    + " columns", null);
        }
        return key;
    }
}
