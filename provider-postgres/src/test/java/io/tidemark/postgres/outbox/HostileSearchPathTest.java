package io.tidemark.postgres.outbox;

import io.tidemark.postgres.CaptureShape;
import io.tidemark.postgres.TruncatePolicy;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.Test;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The capture function is {@code SECURITY DEFINER} without a {@code SET search_path} clause: it runs as the outbox's
 * owner (here the superuser) under the writing session's search_path. This test is the security review of that
 * choice. An application role puts a schema of its own ahead of pg_catalog on its search_path, holding a logging
 * twin of every function, operator and type the capture function uses ({@code row_to_json}, {@code pg_current_xact_id},
 * {@code pg_snapshot_xmax}, {@code pg_current_snapshot}, {@code array_remove}, {@code cardinality}, {@code pg_notify},
 * {@code =}, {@code <>}, {@code >}, {@code -}, a domain named {@code text}) and tables named like the transition
 * tables; a second session does the same with pg_temp objects. Both then write every kind of change the capture
 * handles: nothing hostile may run, and the outbox must hold exactly what a twin table written under the default
 * search_path captured. The same objects are then shown to be live for an unqualified statement of the caller.
 */
@EmbeddedPostgresTest
class HostileSearchPathTest {

    private static final String COLUMNS = "id int PRIMARY KEY, name text, price numeric, seen timestamptz, tags text[]";

    /** A logging function per name the capture function calls; each returns what the real one would, or NULL. */
    private static final String HOSTILE_FUNCTIONS = """
            CREATE FUNCTION evil.row_to_json(r record) RETURNS pg_catalog.json LANGUAGE plpgsql
                AS $$ BEGIN PERFORM evil.log('row_to_json'); RETURN '{}'; END $$;
            CREATE FUNCTION evil.pg_current_xact_id() RETURNS pg_catalog.xid8 LANGUAGE sql
                AS $$ SELECT CASE WHEN evil.log('pg_current_xact_id') THEN '1'::pg_catalog.xid8 END $$;
            CREATE FUNCTION evil.pg_current_snapshot() RETURNS pg_catalog.pg_snapshot LANGUAGE sql
                AS $$ SELECT CASE WHEN evil.log('pg_current_snapshot') THEN '1:1:'::pg_catalog.pg_snapshot END $$;
            CREATE FUNCTION evil.pg_snapshot_xmax(pg_catalog.pg_snapshot) RETURNS pg_catalog.xid8 LANGUAGE sql
                AS $$ SELECT CASE WHEN evil.log('pg_snapshot_xmax') THEN '1'::pg_catalog.xid8 END $$;
            CREATE FUNCTION evil.array_remove(anycompatiblearray, anycompatible) RETURNS anycompatiblearray LANGUAGE sql
                AS $$ SELECT CASE WHEN evil.log('array_remove') THEN $1 END $$;
            CREATE FUNCTION evil.cardinality(anyarray) RETURNS integer LANGUAGE sql
                AS $$ SELECT CASE WHEN evil.log('cardinality') THEN 0 END $$;
            CREATE FUNCTION evil.pg_notify(pg_catalog.text, pg_catalog.text) RETURNS void LANGUAGE plpgsql
                AS $$ BEGIN PERFORM evil.log('pg_notify'); END $$;
            CREATE FUNCTION evil.current_setting(pg_catalog.text) RETURNS pg_catalog.text LANGUAGE sql
                AS $$ SELECT CASE WHEN evil.log('current_setting') THEN 'read committed' END $$;
            CREATE FUNCTION evil.pg_try_advisory_xact_lock(pg_catalog.int8) RETURNS boolean LANGUAGE sql
                AS $$ SELECT evil.log('pg_try_advisory_xact_lock') $$;
            CREATE FUNCTION evil.hashtextextended(pg_catalog.text, pg_catalog.int8) RETURNS pg_catalog.int8 LANGUAGE sql
                AS $$ SELECT CASE WHEN evil.log('hashtextextended') THEN 1::pg_catalog.int8 END $$;
            """;

    /** The type pairs whose operators the capture function uses. */
    private static final List<String[]> OPERATORS = List.of(
            new String[] {"=", "pg_catalog.text", "pg_catalog.text"},
            new String[] {"<>", "pg_catalog.text", "pg_catalog.text"},
            new String[] {">", "pg_catalog.int4", "pg_catalog.int4"},
            new String[] {"-", "pg_catalog.int8", "pg_catalog.int4"});

    private final TestDatabase database;

    HostileSearchPathTest(TestDatabase database) {
        this.database = database;
    }

    /** The capture shape of every outbox this class installs; a subclass runs every test on another one. */
    CaptureShape shape() {
        return CaptureShape.FULL_IMAGE;
    }

    @Test
    void a_hostile_search_path_or_pg_temp_cannot_make_the_capture_run_its_objects_or_capture_anything_else()
            throws SQLException {
        OutboxTables hostile = OutboxTables.create(shape(), database, "hsp", COLUMNS,
                b -> b.truncate(TruncatePolicy.RECORD_DELETES));
        OutboxTables twin = OutboxTables.create(shape(), database, "hsp_twin", COLUMNS,
                b -> b.truncate(TruncatePolicy.RECORD_DELETES));
        DataSource app = database.createRole("hsp_app");
        database.execute("CREATE SCHEMA evil AUTHORIZATION hsp_app;"
                + " GRANT USAGE ON SCHEMA public TO hsp_app;"
                + " GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON public." + hostile.table + " TO hsp_app;"
                + " GRANT CREATE, TEMPORARY ON DATABASE \"" + database.name() + "\" TO hsp_app");

        try (Connection c = app.getConnection(); Statement s = c.createStatement()) {
            s.execute(hostileSchema());
            s.execute("SET search_path = evil, pg_catalog, public");
            writeEverything(s, hostile.table);
        }
        // The installed flag was set: the first write took the wake-up path (isolation check, lock, clear, notify).
        assertThat(rows("SELECT armed::text FROM public." + hostile.table + "_outbox_wakeup")).containsExactly("false");
        database.execute("SELECT public." + hostile.table + "_outbox_arm()");
        try (Connection c = app.getConnection(); Statement s = c.createStatement()) {
            s.execute(hostileTempObjects());
            s.execute("SET search_path = pg_temp, pg_catalog, public");
            writeEverything(s, hostile.table);
        }
        assertThat(rows("SELECT armed::text FROM public." + hostile.table + "_outbox_wakeup")).containsExactly("false");
        try (Connection c = database.dataSource().getConnection(); Statement s = c.createStatement()) {
            writeEverything(s, twin.table);
            writeEverything(s, twin.table);
        }

        assertThat(rows("SELECT what FROM evil.calls")).as("hostile objects run by the capture").isEmpty();
        assertThat(hostile.outboxRowsText()).as("what the hostile sessions' writes captured")
                .hasSize(2 * 11)
                .isEqualTo(twin.outboxRowsText());

        // The same objects are live: unqualified calls, comparisons and casts of the caller run them.
        try (Connection c = app.getConnection(); Statement s = c.createStatement()) {
            s.execute("SET search_path = evil, pg_catalog, public");
            // Each on its own: a hostile operator or function ignores its arguments, which hides what they call.
            s.execute("SELECT row_to_json(r), pg_current_xact_id(), pg_current_snapshot(),"
                    + " pg_snapshot_xmax('1:1:'::pg_catalog.pg_snapshot), array_remove(ARRAY[1], 2), cardinality(ARRAY[1]),"
                    + " 1 > 0, 'a'::text, 'a'::pg_catalog.text = 'b', 'a'::pg_catalog.text <> 'b', 2::int8 - 1,"
                    + " pg_notify('c', 'p'), current_setting('transaction_isolation'),"
                    + " pg_try_advisory_xact_lock(1::pg_catalog.int8), hashtextextended('k', 0::pg_catalog.int8)"
                    + " FROM (SELECT 1 AS x) AS r");
        }
        assertThat(rows("SELECT DISTINCT what FROM evil.calls")).containsExactlyInAnyOrder("row_to_json",
                "pg_current_xact_id", "pg_current_snapshot", "pg_snapshot_xmax", "array_remove", "cardinality",
                "pg_notify", "current_setting", "pg_try_advisory_xact_lock", "hashtextextended", "= text text", "<> text text", "> int4 int4", "- int8 int4", "domain text");
    }

    /**
     * Inserts (one row, then three), updates (a real change, a no-op, a change of key), deletes and truncates:
     * eleven changes. Every operator here is qualified, so the caller's own statements never use the hostile objects.
     */
    private static void writeEverything(Statement s, String table) throws SQLException {
        String t = "public." + table;
        s.execute("INSERT INTO " + t + " VALUES (1, 'a', 1.5, '2026-01-02 03:04:05+00', '{x}')");
        s.execute("INSERT INTO " + t + " (id, name) VALUES (2, 'b'), (3, 'c'), (4, NULL)");
        s.execute("UPDATE " + t + " SET name = 'z', tags = '{y}' WHERE id OPERATOR(pg_catalog.=) 1");
        s.execute("UPDATE " + t + " SET name = 'z' WHERE id OPERATOR(pg_catalog.=) 1");
        s.execute("UPDATE " + t + " SET id = 5 WHERE id OPERATOR(pg_catalog.=) 2");
        s.execute("DELETE FROM " + t + " WHERE id OPERATOR(pg_catalog.=) 3");
        s.execute("TRUNCATE " + t);
    }

    private static String hostileSchema() {
        return """
                CREATE TABLE evil.calls (what text);
                GRANT USAGE ON SCHEMA evil TO PUBLIC;
                GRANT INSERT, SELECT ON evil.calls TO PUBLIC;
                CREATE FUNCTION evil.log(what pg_catalog.text) RETURNS boolean LANGUAGE sql
                    AS $$ INSERT INTO evil.calls VALUES (what) RETURNING true $$;
                """ + HOSTILE_FUNCTIONS + operators("evil") + transitionTableTwins("evil") + textDomain("evil");
    }

    /**
     * pg_temp is searched for relations and types only, never for functions or operators. The tables come first:
     * their columns' {@code text} would otherwise be the domain.
     */
    private static String hostileTempObjects() {
        return transitionTableTwins("pg_temp") + textDomain("pg_temp");
    }

    /** One logging operator per pair, answering what the real one would not. */
    private static String operators(String schema) {
        StringBuilder sql = new StringBuilder();
        for (int i = 0; i < OPERATORS.size(); i++) {
            String[] op = OPERATORS.get(i);
            boolean arithmetic = "-".equals(op[0]);
            String what = op[0] + " " + simple(op[1]) + " " + simple(op[2]);
            sql.append("CREATE FUNCTION ").append(schema).append(".op_").append(i).append("(").append(op[1])
                    .append(", ").append(op[2]).append(") RETURNS ").append(arithmetic ? op[1] : "boolean")
                    .append(" LANGUAGE sql AS $$ SELECT CASE WHEN evil.log('").append(what).append("') THEN ")
                    .append(arithmetic ? "$1" : "false").append(" END $$;\n");
            sql.append("CREATE OPERATOR ").append(schema).append(".").append(op[0]).append(" (LEFTARG = ")
                    .append(op[1]).append(", RIGHTARG = ").append(op[2]).append(", FUNCTION = ").append(schema)
                    .append(".op_").append(i).append(");\n");
        }
        return sql.toString();
    }

    /** A domain named like the type the capture casts to; its check logs every use. */
    private static String textDomain(String schema) {
        return "CREATE DOMAIN " + schema + ".text AS pg_catalog.text CHECK (evil.log('domain text'));\n";
    }

    /** Tables named like the transition tables, holding a row the capture must never see. */
    private static String transitionTableTwins(String schema) {
        StringBuilder sql = new StringBuilder();
        for (String name : List.of("inserted", "deleted", "old_rows", "new_rows")) {
            String table = schema.equals("pg_temp") ? "TEMP TABLE " + name : "TABLE " + schema + "." + name;
            sql.append("CREATE ").append(table).append(" (").append(COLUMNS.replace(" PRIMARY KEY", ""))
                    .append(");\nINSERT INTO ").append(schema).append(".").append(name)
                    .append(" (id, name) VALUES (666, 'hostile');\n");
        }
        return sql.toString();
    }

    private List<String> rows(String sql) throws SQLException {
        List<String> rows = new ArrayList<>();
        try (Connection c = database.dataSource().getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery(sql)) {
            while (rs.next()) {
                rows.add(rs.getString(1));
            }
        }
        return rows;
    }

    private static String simple(String type) {
        return type.substring(type.indexOf('.') + 1);
    }
}
