package io.tidemark.history;

import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Locale;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The trigger functions are {@code SECURITY DEFINER} without a {@code SET search_path} clause: they run as the
 * history's owner under the caller's search_path. This test is the security review of that choice. An ordinary
 * application role puts a schema of its own first on its search_path, holding an operator {@code =}, {@code <>},
 * {@code <=}, {@code <} and {@code +} for every type pair the trigger compares or adds (which {@code IS DISTINCT FROM}
 * and {@code NULLIF} would also use), functions {@code now()} and {@code current_setting()}, domains named {@code text},
 * {@code timestamptz} and {@code jsonb}, and a table with the history table's name; a second session does the same
 * with pg_temp objects. Every hostile object logs its use. The application then writes, in both trigger modes, every
 * kind of change the trigger handles, with change context set: nothing hostile may run, history must be written to the
 * real history table only, and the same objects are shown to be live for an unqualified statement of the caller.
 */
@EmbeddedPostgresTest
@ExtendWith(InvariantsAfterEach.class)
class HostileSearchPathTest {

    private String shop;
    private String evil;

    /** The type pairs whose operators the generated trigger functions use (text also for json compared as text). */
    private static final List<String[]> OPERATORS = List.of(
            new String[] {"=", "pg_catalog.int8", "pg_catalog.int8"},
            new String[] {"=", "pg_catalog.text", "pg_catalog.text"},
            new String[] {"=", "shop.money_amount", "shop.money_amount"},
            new String[] {"=", "shop.state", "shop.state"},
            new String[] {"=", "pg_catalog.text[]", "pg_catalog.text[]"},
            new String[] {"=", "pg_catalog.jsonb", "pg_catalog.jsonb"},
            new String[] {"=", "pg_catalog.timestamptz", "pg_catalog.timestamptz"},
            new String[] {"=", "pg_catalog.int2", "pg_catalog.int4"},
            new String[] {"=", "pg_catalog.name", "pg_catalog.name"},
            new String[] {"<>", "pg_catalog.text", "pg_catalog.text"},
            new String[] {"<>", "pg_catalog.name", "pg_catalog.name"},
            new String[] {"<=", "pg_catalog.int8", "pg_catalog.int4"},
            new String[] {"<=", "pg_catalog.int8", "pg_catalog.int8"},
            new String[] {"<", "pg_catalog.int8", "pg_catalog.int8"},
            new String[] {"+", "pg_catalog.int4", "pg_catalog.int4"},
            new String[] {"+", "pg_catalog.timestamptz", "pg_catalog.interval"},
            new String[] {"*", "pg_catalog.int4", "pg_catalog.int8"});

    /** Both trigger modes of the history table shape and of the current-in-table shape. */
    @ParameterizedTest
    @ValueSource(strings = {"ROW", "STATEMENT", "CURRENT_IN_TABLE", "CURRENT_IN_TABLE_STATEMENT"})
    void a_hostile_search_path_or_pg_temp_cannot_make_the_trigger_run_its_objects_or_write_elsewhere(
            String variant, TestDatabase db) throws SQLException {
        boolean current = variant.startsWith("CURRENT_IN_TABLE");
        TriggerMode mode = variant.endsWith("STATEMENT") ? TriggerMode.STATEMENT : TriggerMode.ROW;
        String suffix = current ? (mode == TriggerMode.ROW ? "cur" : "curs") : mode.name().toLowerCase(Locale.ROOT);
        // One database serves both modes: each gets schemas of its own.
        shop = "shop_" + suffix;
        evil = "evil_" + suffix;
        DataSource admin = db.dataSource();
        DataSource owner = db.createRole("hsp_owner_" + suffix);
        DataSource app = db.createRole("hsp_app_" + suffix);
        Db.exec(admin, x("CREATE SCHEMA shop AUTHORIZATION hsp_owner_" + suffix + ";"
                + " CREATE SCHEMA evil AUTHORIZATION hsp_app_" + suffix + ";"
                + " GRANT CREATE ON DATABASE \"" + db.name() + "\" TO hsp_owner_" + suffix));
        // The other mode's install may have created the registry already: the documented grants for a later owner.
        Db.exec(admin, "DO $$ BEGIN IF pg_catalog.to_regclass('tidemark.temporal_tables') IS NOT NULL THEN"
                + " GRANT USAGE ON SCHEMA tidemark TO hsp_owner_" + suffix + ";"
                + " GRANT SELECT, INSERT, UPDATE, DELETE ON tidemark.temporal_tables TO hsp_owner_" + suffix + ";"
                + " END IF; END $$");
        Db.exec(owner, x("CREATE DOMAIN shop.money_amount AS numeric(12, 2);"
                + " CREATE TYPE shop.state AS ENUM ('open', 'closed');"
                + " CREATE TABLE shop.items (id bigint PRIMARY KEY, name text, price shop.money_amount,"
                + " state shop.state, tags text[], doc json, meta jsonb, seen timestamptz)"));
        TemporalTable items = TemporalTable.forTable(x("shop.items")).triggerMode(mode)
                .storage(current ? HistoryStorage.CURRENT_IN_TABLE : HistoryStorage.HISTORY_TABLE).build();
        items.install(owner);
        Db.exec(owner, x("GRANT USAGE ON SCHEMA shop TO PUBLIC;"
                + " GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON shop.items TO hsp_app_" + suffix));

        Db.exec(app, x(hostileSchema()));
        try (Connection c = app.getConnection(); Statement s = c.createStatement()) {
            s.execute(x("SET search_path = evil, pg_catalog, shop"));
            writeEverything(s);
        }
        try (Connection c = app.getConnection(); Statement s = c.createStatement()) {
            s.execute(x(hostileTempObjects()));
            s.execute(x("SET search_path = pg_temp, pg_catalog, shop"));
            writeEverything(s);
            assertThat(count(s, "SELECT pg_catalog.count(*) FROM pg_temp.items_history"))
                    .as("the pg_temp table named like the history table").isZero();
        }

        assertThat(Db.rows(admin, x("SELECT who, what FROM evil.calls"))).as("hostile objects run by the trigger").isEmpty();
        assertThat(Db.count(admin, x("SELECT count(*) FROM evil.items_history"))).isZero();
        assertThat(Db.rows(admin, x("SELECT operation, count(*)::int AS n, count(changed_by)::int AS with_context"
                + " FROM shop.items_history GROUP BY operation ORDER BY operation")))
                .as("history written to the real table, change context read, by both sessions")
                .extracting(r -> r.get("operation") + ":" + r.get("n") + ":" + r.get("with_context"))
                .containsExactly("1:" + 2 * 73 + ":" + 2 * 73, "2:" + 2 * 71 + ":" + 2 * 71, "3:" + 2 * 73 + ":" + 2 * 73);

        // The same objects are live: an unqualified comparison, now() and a text cast of the caller run them.
        try (Connection c = app.getConnection(); Statement s = c.createStatement()) {
            s.execute(x("SET search_path = evil, pg_catalog, shop"));
            s.execute(x("SELECT 1::int8 = 2::int8, now(), 'x'::text, NULLIF('a'::pg_catalog.text, 'b')"));
        }
        assertThat(Db.rows(admin, x("SELECT DISTINCT what FROM evil.calls ORDER BY what")))
                .extracting(r -> r.get("what"))
                .containsExactlyInAnyOrder("= int8 int8", "= text text", "domain text", "now");
    }

    /**
     * Inserts, changes (a real change, a no-op, a change of key), deletes and truncates, with change context, one row
     * at a time and 70 rows at a time (STATEMENT mode plans statements of more than 64 rows differently). Every
     * operator here is qualified, so the caller's own statements never use the hostile objects.
     */
    private void writeEverything(Statement s) throws SQLException {
        s.execute(x("SELECT pg_catalog.set_config('tidemark.changed_by', 'u-1', false),"
                + " pg_catalog.set_config('tidemark.extra', '{\"ticket\": 1}', false)"));
        s.execute(x("INSERT INTO shop.items VALUES (1, 'a', 1.5, 'open', '{x}', '{\"a\": 1}', '{\"a\": 1}', pg_catalog.now())"));
        s.execute(x("UPDATE shop.items SET name = 'b', tags = '{y}', doc = '{\"a\": 2}' WHERE id OPERATOR(pg_catalog.=) 1"));
        s.execute(x("UPDATE shop.items SET name = 'b' WHERE id OPERATOR(pg_catalog.=) 1"));
        s.execute(x("UPDATE shop.items SET id = 2 WHERE id OPERATOR(pg_catalog.=) 1"));
        s.execute(x("INSERT INTO shop.items (id, name, state) SELECT g, 'n', 'open' FROM pg_catalog.generate_series(10, 79) AS g"));
        s.execute(x("UPDATE shop.items SET state = 'closed' WHERE id OPERATOR(pg_catalog.>=) 10"));
        s.execute(x("DELETE FROM shop.items WHERE id OPERATOR(pg_catalog.>=) 40"));
        s.execute(x("INSERT INTO shop.items (id, name) VALUES (1, 'again')"));
        s.execute(x("TRUNCATE shop.items"));
    }

    private String hostileSchema() {
        StringBuilder sql = new StringBuilder("""
                CREATE TABLE evil.calls (who text, what text);
                GRANT USAGE ON SCHEMA evil TO PUBLIC;
                GRANT INSERT ON evil.calls TO PUBLIC;
                CREATE FUNCTION evil.log(what pg_catalog.text) RETURNS boolean LANGUAGE sql
                    AS $$ INSERT INTO evil.calls VALUES (CURRENT_USER, what) RETURNING true $$;
                CREATE FUNCTION evil.now() RETURNS pg_catalog.timestamptz LANGUAGE sql
                    AS $$ SELECT CASE WHEN evil.log('now') THEN pg_catalog.clock_timestamp() END $$;
                CREATE FUNCTION evil.current_setting(pg_catalog.text, boolean) RETURNS pg_catalog.text LANGUAGE sql
                    AS $$ SELECT CASE WHEN evil.log('current_setting') THEN 'forged' END $$;
                CREATE TABLE evil.items_history (LIKE shop.items, history_id bigint, valid_from timestamptz,
                    valid_to timestamptz, operation smallint, chain_no int, changed_by text, changed_by_name text,
                    correlation_id text, reason text, extra jsonb);
                GRANT INSERT, UPDATE, SELECT ON evil.items_history TO PUBLIC;
                CREATE TABLE evil.tidemark_deleted (LIKE shop.items INCLUDING DEFAULTS);
                INSERT INTO evil.tidemark_deleted (id, name) VALUES (999, 'forged');
                GRANT SELECT ON evil.tidemark_deleted TO PUBLIC;
                """);
        sql.append(operators("evil"));
        sql.append(domains("evil"));
        return sql.toString();
    }

    private String hostileTempObjects() {
        return "CREATE TEMP TABLE items_history (LIKE evil.items_history);"
                + " CREATE TEMP TABLE tidemark_deleted (LIKE shop.items INCLUDING DEFAULTS);"
                + " INSERT INTO tidemark_deleted (id, name) VALUES (998, 'forged');" + operators("pg_temp")
                + domains("pg_temp");
    }

    /** One logging operator per pair; its function lives in {@code schema} too (pg_temp functions are allowed). */
    private String operators(String schema) {
        StringBuilder sql = new StringBuilder();
        for (int i = 0; i < OPERATORS.size(); i++) {
            String[] op = OPERATORS.get(i);
            String what = op[0] + " " + simple(op[1]) + " " + simple(op[2]);
            sql.append("CREATE FUNCTION ").append(schema).append(".op_").append(i).append("(").append(op[1])
                    .append(", ").append(op[2]).append(") RETURNS ")
                    .append("+".equals(op[0]) ? op[1] : "boolean")
                    .append(" LANGUAGE sql AS $$ SELECT CASE WHEN evil.log('").append(what).append("') THEN ")
                    .append("+".equals(op[0]) ? "$1" : "false").append(" END $$;\n");
            sql.append("CREATE OPERATOR ").append(schema).append(".").append(op[0]).append(" (LEFTARG = ")
                    .append(op[1]).append(", RIGHTARG = ").append(op[2]).append(", FUNCTION = ").append(schema)
                    .append(".op_").append(i).append(");\n");
        }
        return sql.toString();
    }

    /** Domains named like the types the trigger declares and casts to; their check logs every use. */
    private String domains(String schema) {
        StringBuilder sql = new StringBuilder();
        for (String type : List.of("text", "timestamptz", "jsonb")) {
            sql.append("CREATE DOMAIN ").append(schema).append(".").append(type).append(" AS pg_catalog.")
                    .append(type).append(" CHECK (evil.log('domain ").append(type).append("'));\n");
        }
        return sql.toString();
    }

    /** The SQL with this mode's schema names. */
    private String x(String sql) {
        return sql.replace("shop", shop).replace("evil", evil);
    }

    private static String simple(String type) {
        return type.substring(type.indexOf('.') + 1);
    }

    private static long count(Statement s, String sql) throws SQLException {
        try (var rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
