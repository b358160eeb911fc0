package io.tidemark.history.internal.catalog;

import io.tidemark.history.internal.ddl.HistoryNames;
import io.tidemark.sync.internal.jdbc.Jdbc;
import io.tidemark.history.TemporalTable;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.internal.sql.PgName;
import io.tidemark.sync.internal.sql.SqlTemplate;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Reads a table's shape from the catalog and checks that history can be generated for it.
 *
 * <p>The caller's transaction gets {@code search_path = pg_catalog, pg_temp} first, so {@code format_type} writes
 * every user type (domain, enum, composite) schema-qualified: the generated DDL then means the same thing whatever
 * the installing session's search_path was.
 */
public final class CatalogReader {

    /** Columns Tidemark adds to every history table; a versioned column cannot have one of these names. */
    public static final Set<String> FIXED_HISTORY_COLUMNS = Set.of("history_id", "valid_from", "valid_to", "operation",
            "chain_no", "changed_by", "changed_by_name", "correlation_id", "reason", "extra");
    /**
     * With HistoryStorage.CURRENT_IN_TABLE: the columns of the closed-versions table besides the versioned ones (the
     * change context is one array there, not the five columns of the history table).
     */
    public static final java.util.List<String> CLOSED_HISTORY_COLUMNS = java.util.List.of("history_id", "valid_from",
            "valid_to", "operation", "chain_no", "context");
    public static final String SESSION_USER_COLUMN = "db_session_user";
    public static final String TRANSACTION_ID_COLUMN = "transaction_id";
    /** With HistoryStorage.CURRENT_IN_TABLE: the start of the row's current version, kept in the table. */
    public static final String CURRENT_FROM_COLUMN = "tidemark_valid_from";
    /** With HistoryStorage.CURRENT_IN_TABLE: the change context of the row's current version, kept in the table. */
    public static final String CURRENT_CONTEXT_COLUMN = "tidemark_context";

    private static final String COLUMNS = """
            SELECT a.attname, pg_catalog.format_type(a.atttypid, a.atttypmod) AS type, a.atttypid,
                   CASE WHEN a.attcollation <> 0 AND a.attcollation <> t.typcollation
                        THEN pg_catalog.quote_ident(cn.nspname) || '.' || pg_catalog.quote_ident(co.collname)
                   END AS collation,
                   a.attgenerated::text AS generated
              FROM pg_catalog.pg_attribute a
              JOIN pg_catalog.pg_type t ON t.oid = a.atttypid
              LEFT JOIN pg_catalog.pg_collation co ON co.oid = a.attcollation
              LEFT JOIN pg_catalog.pg_namespace cn ON cn.oid = co.collnamespace
             WHERE a.attrelid = ? AND a.attnum > 0 AND NOT a.attisdropped
             ORDER BY a.attnum""";

    private static final String PRIMARY_KEY = """
            SELECT a.attname
              FROM pg_catalog.pg_constraint con
              CROSS JOIN LATERAL pg_catalog.unnest(con.conkey) WITH ORDINALITY AS k(attnum, ord)
              JOIN pg_catalog.pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.attnum
             WHERE con.conrelid = ? AND con.contype = 'p'
             ORDER BY k.ord""";

    /**
     * Whether a type has a default equality the trigger's comparison can use: a default btree or hash
     * operator class for the type itself, for a type it is implicitly binary-coercible to (varchar to text, not xml
     * to text, whose cast is explicit), or for its polymorphic family (enums, ranges). Domains are resolved to their
     * base type and arrays to their element type by the caller; composites always compare as text because one field
     * without equality breaks the whole row. A type that passes is then probed with the parser itself.
     */
    private static final String TYPE_INFO = """
            SELECT t.typtype, t.typbasetype, t.typelem, t.typsubscript = 'pg_catalog.array_subscript_handler'::regproc,
                   EXISTS (SELECT 1 FROM pg_catalog.pg_opclass oc JOIN pg_catalog.pg_am am ON am.oid = oc.opcmethod
                            WHERE oc.opcdefault AND am.amname IN ('btree', 'hash')
                              AND (oc.opcintype = t.oid
                                   OR (t.typtype = 'e' AND oc.opcintype = 'pg_catalog.anyenum'::regtype)
                                   OR (t.typtype = 'r' AND oc.opcintype = 'pg_catalog.anyrange'::regtype)
                                   OR (t.typtype = 'm' AND oc.opcintype = 'pg_catalog.anymultirange'::regtype)
                                   OR EXISTS (SELECT 1 FROM pg_catalog.pg_cast ca WHERE ca.castsource = t.oid
                                               AND ca.casttarget = oc.opcintype AND ca.castmethod = 'b'
                                               AND ca.castcontext = 'i')))
              FROM pg_catalog.pg_type t WHERE t.oid = ?""";

    private CatalogReader() {
    }

    /** Pins the transaction's search_path so catalog output is qualified. Call before reading. */
    public static void pinSearchPath(Connection c) throws SQLException {
        Jdbc.execute(c, "SET LOCAL search_path TO pg_catalog, pg_temp");
    }

    /** The table's oid, or empty when it does not exist. */
    public static Optional<Long> tableOid(Connection c, PgName table) throws SQLException {
        List<Long> oids = Jdbc.query(c, """
                        SELECT c.oid FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
                         WHERE n.nspname = ? AND c.relname = ?""",
                rs -> rs.getLong(1), table.schema().orElseThrow(), table.name());
        return oids.stream().findFirst();
    }

    /** Reads and validates the table of {@code config}. */
    /**
     * Statement triggers and table inheritance: PostgreSQL fires a statement trigger only for the table a statement
     * names, so an UPDATE or DELETE of a parent would change the rows of a child with statement triggers unrecorded,
     * and a parent's transition tables hold its children's rows, which would be recorded as its own. Row triggers
     * fire on the table that holds the row, whichever table the statement names.
     */
    private static void refuseInheritance(Connection c, long oid, String object) throws SQLException {
        List<String[]> related = Jdbc.query(c, """
                SELECT (SELECT pg_catalog.string_agg(i.inhparent::pg_catalog.regclass::pg_catalog.text, ', ')
                          FROM pg_catalog.pg_inherits AS i WHERE i.inhrelid = ?),
                       (SELECT pg_catalog.string_agg(i.inhrelid::pg_catalog.regclass::pg_catalog.text, ', ')
                          FROM pg_catalog.pg_inherits AS i WHERE i.inhparent = ?)""",
                rs -> new String[] {rs.getString(1), rs.getString(2)}, oid, oid);
        String parents = related.get(0)[0];
        String children = related.get(0)[1];
        if (parents != null || children != null) {
            throw TidemarkException.forObject(ErrorCode.SCHEMA_UNSUPPORTED, object, object
                    + (parents != null ? " inherits from " + parents : " is inherited by " + children)
                    + ": PostgreSQL fires a statement trigger only for the table a statement names, so with"
                    + " TriggerMode.STATEMENT an UPDATE or DELETE through a parent would change a child's rows"
                    + " unrecorded, and a parent's transition tables hold its children's rows. Use TriggerMode.ROW"
                    + " for a table in an inheritance hierarchy: row triggers fire on the table that holds the row");
        }
    }

    public static TableShape read(Connection c, TemporalTable config) throws SQLException {
        PgName table = HistoryNames.table(config);
        String object = table.toString();
        List<Object[]> rel = Jdbc.query(c, """
                        SELECT c.oid, c.relkind FROM pg_catalog.pg_class c
                          JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
                         WHERE n.nspname = ? AND c.relname = ?""",
                rs -> new Object[] {rs.getLong(1), rs.getString(2)}, table.schema().orElseThrow(), table.name());
        if (rel.isEmpty()) {
            throw TidemarkException.forObject(ErrorCode.SCHEMA_UNSUPPORTED, object, "table " + object + " does not"
                    + " exist; create it first, and check the schema (a name without schema means public)");
        }
        long oid = (Long) rel.get(0)[0];
        String kind = (String) rel.get(0)[1];
        if (!"r".equals(kind)) {
            throw TidemarkException.forObject(ErrorCode.SCHEMA_UNSUPPORTED, object, object + " is not an ordinary"
                    + " table (relkind '" + kind + "'); history triggers are generated for ordinary tables only"
                    + ("p".equals(kind) ? " (install history on each partition instead)" : ""));
        }
        if (config.triggerMode() == io.tidemark.history.TriggerMode.STATEMENT) {
            refuseInheritance(c, oid, object);
        }
        boolean currentInTable = config.storage() == io.tidemark.history.HistoryStorage.CURRENT_IN_TABLE;
        Map<Long, Boolean> equalityCache = new HashMap<>();
        List<Column> all = new ArrayList<>();
        Set<String> generated = new LinkedHashSet<>();
        for (Object[] row : Jdbc.query(c, COLUMNS, rs -> new Object[] {rs.getString(1), rs.getString(2),
                rs.getLong(3), rs.getString(4), rs.getString(5)}, oid)) {
            long typeOid = (Long) row[2];
            boolean noEquality = !hasEquality(c, typeOid, equalityCache);
            all.add(new Column((String) row[0], (String) row[1], (String) row[3], noEquality));
            String generation = (String) row[4];
            if ("s".equals(generation) || "v".equals(generation)) {
                generated.add((String) row[0]);
            }
            if ("v".equals(generation) && currentInTable && !config.excludedColumns().contains((String) row[0])) {
                // Measured on PostgreSQL 18: the archiving trigger reads NULL for a virtual column's old value.
                throw TidemarkException.forObject(ErrorCode.SCHEMA_UNSUPPORTED, object, "column \"" + row[0]
                        + "\" is a virtual generated column, whose value the archiving trigger of"
                        + " HistoryStorage.CURRENT_IN_TABLE cannot read; exclude it (history keeps the columns it is"
                        + " computed from) or make it STORED");
            }
        }
        List<String> keyNames = Jdbc.query(c, PRIMARY_KEY, rs -> rs.getString(1), oid);
        if (keyNames.isEmpty()) {
            throw TidemarkException.forObject(ErrorCode.SCHEMA_UNSUPPORTED, object, object + " has no primary key;"
                    + " history chains are kept per key, so add a PRIMARY KEY first");
        }
        Set<String> names = new LinkedHashSet<>();
        all.forEach(col -> names.add(col.name()));
        for (String excluded : config.excludedColumns()) {
            if (!names.contains(excluded)) {
                throw TidemarkException.forObject(ErrorCode.INVALID_CONFIGURATION, object, "excluded column \""
                        + excluded + "\" does not exist; columns are " + names);
            }
            if (keyNames.contains(excluded)) {
                throw TidemarkException.forObject(ErrorCode.INVALID_CONFIGURATION, object, "column \"" + excluded
                        + "\" is part of the primary key and cannot be excluded: history is kept per key");
            }
        }
        List<Column> versioned = new ArrayList<>();
        for (Column col : all) {
            if (currentInTable && (col.name().equals(CURRENT_FROM_COLUMN) || col.name().equals(CURRENT_CONTEXT_COLUMN))) {
                continue; // the current version's period and context: history's own columns, not versioned data
            }
            if (!config.excludedColumns().contains(col.name())) {
                checkNotReserved(config, col.name());
                versioned.add(col);
            }
        }
        List<Column> key = new ArrayList<>();
        for (String k : keyNames) {
            key.add(all.stream().filter(col -> col.name().equals(k)).findFirst().orElseThrow());
        }
        if (config.seedValidFromColumn().isPresent()) {
            String seed = config.seedValidFromColumn().get();
            Column col = all.stream().filter(x -> x.name().equals(seed)).findFirst().orElseThrow(() ->
                    TidemarkException.forObject(ErrorCode.INVALID_CONFIGURATION, object, "seed column \"" + seed
                            + "\" does not exist; columns are " + names));
            if (!col.type().startsWith("timestamp") && !col.type().equals("date")) {
                throw TidemarkException.forObject(ErrorCode.INVALID_CONFIGURATION, object, "seed column \"" + seed
                        + "\" has type " + col.type() + "; it must be timestamptz, timestamp or date");
            }
        }
        if (currentInTable) {
            for (Column k : key) {
                if (generated.contains(k.name())) {
                    // The UPDATE trigger tells a key update from NEW's key, which a BEFORE trigger cannot read.
                    throw TidemarkException.forObject(ErrorCode.SCHEMA_UNSUPPORTED, object, "primary-key column \""
                            + k.name() + "\" is generated; HistoryStorage.CURRENT_IN_TABLE needs a key its BEFORE"
                            + " UPDATE trigger can read. Use HistoryStorage.HISTORY_TABLE for this table");
                }
            }
            refuseGeneratedFromExcluded(c, config, oid, versioned, generated);
        }
        return new TableShape(table, all, versioned, key, generated);
    }

    /**
     * CURRENT_IN_TABLE compares a generated column through the columns it is computed from (a BEFORE trigger cannot
     * read its new value). A versioned generated column computed from an excluded column would change unarchived
     * when only that column changes: refused, naming both.
     */
    private static void refuseGeneratedFromExcluded(Connection c, TemporalTable config, long oid,
                                                    List<Column> versioned, Set<String> generated)
            throws SQLException {
        for (Column col : versioned) {
            if (!generated.contains(col.name())) {
                continue;
            }
            List<String> sources = Jdbc.query(c, """
                    SELECT DISTINCT b.attname::text
                      FROM pg_catalog.pg_attribute g
                      JOIN pg_catalog.pg_attrdef d ON d.adrelid = g.attrelid AND d.adnum = g.attnum
                      -- Recorded on the column default (newer servers) or on the column itself (older ones).
                      JOIN pg_catalog.pg_depend dep
                        ON ((dep.classid = 'pg_catalog.pg_attrdef'::pg_catalog.regclass AND dep.objid = d.oid)
                            OR (dep.classid = 'pg_catalog.pg_class'::pg_catalog.regclass AND dep.objid = g.attrelid
                                AND dep.objsubid = g.attnum))
                       AND dep.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass
                       AND dep.refobjid = g.attrelid AND dep.refobjsubid > 0 AND dep.refobjsubid <> g.attnum
                      JOIN pg_catalog.pg_attribute b ON b.attrelid = g.attrelid AND b.attnum = dep.refobjsubid
                     WHERE g.attrelid = ? AND g.attname = ?
                     ORDER BY 1""", rs -> rs.getString(1), oid, col.name());
            List<String> excluded = sources.stream().filter(config.excludedColumns()::contains).toList();
            if (!excluded.isEmpty()) {
                throw TidemarkException.forObject(ErrorCode.INVALID_CONFIGURATION, HistoryNames.table(config)
                        .toString(), "generated column \"" + col.name() + "\" is computed from excluded column(s) "
                        + excluded + "; with HistoryStorage.CURRENT_IN_TABLE a change of a generated column is seen"
                        + " in the columns it is computed from, so exclude it too or version them");
            }
        }
    }

    private static void checkNotReserved(TemporalTable config, String column) {
        boolean reserved = FIXED_HISTORY_COLUMNS.contains(column)
                || (config.sessionUserColumn() && SESSION_USER_COLUMN.equals(column))
                || (config.transactionIdColumn() && TRANSACTION_ID_COLUMN.equals(column));
        if (reserved) {
            throw TidemarkException.forObject(ErrorCode.SCHEMA_UNSUPPORTED, HistoryNames.table(config).toString(), "column \""
                    + column + "\" has the name of a column every history table adds (" + FIXED_HISTORY_COLUMNS
                    + " and the opt-in db_session_user, transaction_id); rename it or exclude it from history");
        }
        // The closed versions keep the context in one column, and the view adds the stored start: a versioned column
        // of either name would collide there (the table's own two columns are not versioned, see read()).
        if (config.storage() == io.tidemark.history.HistoryStorage.CURRENT_IN_TABLE
                && (column.equals("context") || column.equals(CURRENT_FROM_COLUMN)
                    || column.equals(CURRENT_CONTEXT_COLUMN))) {
            throw TidemarkException.forObject(ErrorCode.SCHEMA_UNSUPPORTED, HistoryNames.table(config).toString(), "column \""
                    + column + "\" has the name of a column HistoryStorage.CURRENT_IN_TABLE adds (context in the"
                    + " closed versions, " + CURRENT_FROM_COLUMN + " in the history view, " + CURRENT_FROM_COLUMN
                    + " and " + CURRENT_CONTEXT_COLUMN + " in the table); rename it or exclude it from history");
        }
    }

    /**
     * Asks PostgreSQL's own operator resolution whether {@code x OPERATOR(pg_catalog.=) x} (the trigger's comparison)
     * parses for the type, inside a
     * savepoint so a failure leaves the caller's transaction usable. The type name comes from format_type.
     */
    private static boolean parserResolvesEquality(Connection c, long typeOid) throws SQLException {
        String type = Jdbc.query(c, "SELECT pg_catalog.format_type(?::oid, NULL)", rs -> rs.getString(1), typeOid).get(0);
        java.sql.Savepoint savepoint = c.setSavepoint();
        try {
            Jdbc.execute(c, SqlTemplate.of("EXPLAIN SELECT NULL::{{type}} OPERATOR(pg_catalog.=) NULL::{{type}}")
                    .with("type", type).render());
            c.releaseSavepoint(savepoint);
            return true;
        } catch (SQLException e) {
            c.rollback(savepoint);
            return false;
        }
    }

    private static boolean hasEquality(Connection c, long typeOid, Map<Long, Boolean> cache) throws SQLException {
        Boolean known = cache.get(typeOid);
        if (known != null) {
            return known;
        }
        List<Object[]> info = Jdbc.query(c, TYPE_INFO, rs -> new Object[] {rs.getString(1), rs.getLong(2),
                rs.getLong(3), rs.getBoolean(4), rs.getBoolean(5)}, typeOid);
        Object[] t = info.get(0);
        boolean result;
        if ("d".equals(t[0])) {
            result = hasEquality(c, (Long) t[1], cache);
        } else if ((Boolean) t[3] && (Long) t[2] != 0L) {
            result = hasEquality(c, (Long) t[2], cache);
        } else if ("c".equals(t[0])) {
            result = false;
        } else {
            result = (Boolean) t[4] && parserResolvesEquality(c, typeOid);
        }
        cache.put(typeOid, result);
        return result;
    }
}
