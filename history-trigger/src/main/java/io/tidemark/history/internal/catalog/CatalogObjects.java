package io.tidemark.history.internal.catalog;

import io.tidemark.sync.internal.jdbc.Jdbc;
import io.tidemark.sync.internal.sql.PgName;

import java.sql.Array;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** Looks up the installed objects verify() and the installer check: functions, triggers, indexes, relations. */
public final class CatalogObjects {

    /** A function as installed: its body, whether it is SECURITY DEFINER, and its SET options. */
    public record InstalledFunction(String source, boolean securityDefiner, List<String> settings) {
    }

    /**
     * A trigger as installed. {@code enabled} is pg_trigger.tgenabled: 'D' means disabled. {@code type} is
     * pg_trigger.tgtype (timing, level and events as bits); {@code whenColumns} the table's columns its WHEN condition
     * reads (PostgreSQL records them as dependencies), sorted; {@code hasWhen} whether it has a WHEN condition at all.
     */
    public record InstalledTrigger(String function, String enabled, int type, boolean hasWhen,
                                   List<String> whenColumns) {
    }

    private CatalogObjects() {
    }

    /** A function of {@code name} taking exactly {@code argTypes} (e.g. "" or "timestamp with time zone"). */
    public static Optional<InstalledFunction> function(Connection c, PgName name, String argTypes) throws SQLException {
        List<InstalledFunction> found = Jdbc.query(c, """
                SELECT p.prosrc, p.prosecdef, p.proconfig
                FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
                WHERE n.nspname = ? AND p.proname = ?
                AND pg_catalog.pg_get_function_identity_arguments(p.oid) = ?""",
                rs -> new InstalledFunction(rs.getString(1), rs.getBoolean(2), settings(rs.getArray(3))),
                name.schema().orElseThrow(), name.name(), argTypes.isEmpty() ? "" : "at " + argTypes);
        return found.stream().findFirst();
    }

    /** Whether any function of that name exists, whatever its arguments. */
    public static boolean anyFunction(Connection c, PgName name) throws SQLException {
        return !Jdbc.query(c, """
                SELECT 1 FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n
                ON n.oid = p.pronamespace WHERE n.nspname = ? AND p.proname = ?""", rs -> 1,
                name.schema().orElseThrow(), name.name()).isEmpty();
    }

    public static Optional<InstalledTrigger> trigger(Connection c, PgName table, String trigger) throws SQLException {
        return Jdbc.query(c, """
                SELECT pn.nspname || '.' || p.proname, t.tgenabled::text, t.tgtype::int, t.tgqual IS NOT NULL,
                       ARRAY(SELECT DISTINCT a.attname::text
                               FROM pg_catalog.pg_depend d
                               JOIN pg_catalog.pg_attribute a ON a.attrelid = d.refobjid AND a.attnum = d.refobjsubid
                              WHERE d.classid = 'pg_catalog.pg_trigger'::pg_catalog.regclass AND d.objid = t.oid
                                AND d.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass
                                AND d.refobjid = r.oid AND d.refobjsubid > 0)
                FROM pg_catalog.pg_trigger t
                JOIN pg_catalog.pg_class r ON r.oid = t.tgrelid
                JOIN pg_catalog.pg_namespace n ON n.oid = r.relnamespace
                JOIN pg_catalog.pg_proc p ON p.oid = t.tgfoid
                JOIN pg_catalog.pg_namespace pn ON pn.oid = p.pronamespace
                WHERE n.nspname = ? AND r.relname = ? AND t.tgname = ?""",
                rs -> new InstalledTrigger(rs.getString(1), rs.getString(2), rs.getInt(3), rs.getBoolean(4),
                        java.util.Arrays.stream((String[]) rs.getArray(5).getArray()).sorted().toList()),
                table.schema().orElseThrow(), table.name(), trigger).stream().findFirst();
    }

    /** The relkind of a relation of that name in the schema ('r' table, 'v' view, ...), or empty. */
    public static Optional<String> relationKind(Connection c, String schema, String name) throws SQLException {
        return Jdbc.query(c, """
                SELECT c.relkind::text FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n
                ON n.oid = c.relnamespace WHERE n.nspname = ? AND c.relname = ?""", rs -> rs.getString(1), schema, name)
                .stream().findFirst();
    }

    /** Views (and materialized views) that read the relation: dropping it without CASCADE fails while they exist. */
    public static List<String> dependentViews(Connection c, PgName relation) throws SQLException {
        return Jdbc.query(c, """
                SELECT DISTINCT pg_catalog.quote_ident(vn.nspname) || '.' || pg_catalog.quote_ident(v.relname)
                FROM pg_catalog.pg_class r
                JOIN pg_catalog.pg_namespace n ON n.oid = r.relnamespace
                JOIN pg_catalog.pg_depend d ON d.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass
                                           AND d.refobjid = r.oid
                                           AND d.classid = 'pg_catalog.pg_rewrite'::pg_catalog.regclass
                JOIN pg_catalog.pg_rewrite w ON w.oid = d.objid
                JOIN pg_catalog.pg_class v ON v.oid = w.ev_class AND v.oid <> r.oid
                JOIN pg_catalog.pg_namespace vn ON vn.oid = v.relnamespace
                WHERE n.nspname = ? AND r.relname = ?
                ORDER BY 1""", rs -> rs.getString(1), relation.schema().orElseThrow(), relation.name());
    }

    /**
     * The grants on a relation other than its owner's own, as GRANT statements to run again after it is recreated
     * (grantee names as regrole prints them: quoted where needed).
     */
    public static List<String> grants(Connection c, PgName relation) throws SQLException {
        return Jdbc.query(c, """
                SELECT 'GRANT ' || a.privilege_type || ' ON ' || pg_catalog.quote_ident(n.nspname) || '.'
                       || pg_catalog.quote_ident(r.relname) || ' TO '
                       || CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE a.grantee::pg_catalog.regrole::pg_catalog.text END
                       || CASE WHEN a.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END
                FROM pg_catalog.pg_class r
                JOIN pg_catalog.pg_namespace n ON n.oid = r.relnamespace
                CROSS JOIN LATERAL pg_catalog.aclexplode(r.relacl) AS a
                WHERE n.nspname = ? AND r.relname = ? AND a.grantee <> r.relowner
                ORDER BY 1""", rs -> rs.getString(1), relation.schema().orElseThrow(), relation.name());
    }

    /** Whether a relation (table, index, view, ...) of that name exists in the schema. */
    public static boolean relationExists(Connection c, String schema, String name) throws SQLException {
        return !Jdbc.query(c, """
                SELECT 1 FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n
                ON n.oid = c.relnamespace WHERE n.nspname = ? AND c.relname = ?""", rs -> 1, schema, name).isEmpty();
    }

    /** The history table's live columns, name to type definition (with collation when not the default). */
    public static Map<String, String> columns(Connection c, PgName table) throws SQLException {
        Map<String, String> columns = new LinkedHashMap<>();
        Jdbc.query(c, """
                SELECT a.attname, pg_catalog.format_type(a.atttypid, a.atttypmod)
                || CASE WHEN a.attcollation <> 0 AND a.attcollation <> t.typcollation
                THEN ' COLLATE ' || pg_catalog.quote_ident(cn.nspname) || '.'
                || pg_catalog.quote_ident(co.collname) ELSE '' END
                FROM pg_catalog.pg_attribute a
                JOIN pg_catalog.pg_class r ON r.oid = a.attrelid
                JOIN pg_catalog.pg_namespace n ON n.oid = r.relnamespace
                JOIN pg_catalog.pg_type t ON t.oid = a.atttypid
                LEFT JOIN pg_catalog.pg_collation co ON co.oid = a.attcollation
                LEFT JOIN pg_catalog.pg_namespace cn ON cn.oid = co.collnamespace
                WHERE n.nspname = ? AND r.relname = ? AND a.attnum > 0 AND NOT a.attisdropped
                ORDER BY a.attnum""",
                rs -> columns.put(rs.getString(1), rs.getString(2)), table.schema().orElseThrow(), table.name());
        return columns;
    }

    /**
     * The table's other BEFORE ROW UPDATE triggers whose names sort after {@code trigger}: PostgreSQL fires triggers
     * of one kind in name order, so these run after it and can change the row it has already judged.
     */
    public static List<String> beforeRowUpdateTriggersAfter(Connection c, PgName table, String trigger)
            throws SQLException {
        // tgtype bits: 1 ROW, 2 BEFORE, 16 UPDATE. name compares in C order, the order triggers fire in.
        return Jdbc.query(c, """
                SELECT t.tgname::text
                FROM pg_catalog.pg_trigger t
                JOIN pg_catalog.pg_class r ON r.oid = t.tgrelid
                JOIN pg_catalog.pg_namespace n ON n.oid = r.relnamespace
                WHERE n.nspname = ? AND r.relname = ? AND NOT t.tgisinternal
                  AND (t.tgtype::int & 19) = 19 AND t.tgname > ?::name
                ORDER BY t.tgname""",
                rs -> rs.getString(1), table.schema().orElseThrow(), table.name(), trigger);
    }

    /** A column's default as PostgreSQL deparses it, or empty when it has none. */
    public static Optional<String> columnDefault(Connection c, PgName table, String column) throws SQLException {
        return Jdbc.query(c, """
                SELECT pg_catalog.pg_get_expr(d.adbin, d.adrelid)
                FROM pg_catalog.pg_attrdef d
                JOIN pg_catalog.pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum
                JOIN pg_catalog.pg_class r ON r.oid = d.adrelid
                JOIN pg_catalog.pg_namespace n ON n.oid = r.relnamespace
                WHERE n.nspname = ? AND r.relname = ? AND a.attname = ?""",
                rs -> rs.getString(1), table.schema().orElseThrow(), table.name(), column).stream().findFirst();
    }

    private static List<String> settings(Array array) throws SQLException {
        if (array == null) {
            return List.of();
        }
        return List.of((String[]) array.getArray());
    }
}
