package io.tidemark.postgres.outbox;

import io.tidemark.postgres.PostgresOutbox;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
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
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Installing, re-installing and removing an outbox: idempotent, all-or-nothing, without superuser rights. */
@EmbeddedPostgresTest
class OutboxInstallTest {

    private final TestDatabase database;

    OutboxInstallTest(TestDatabase database) {
        this.database = database;
    }

    @Test
    void installing_twice_keeps_the_captured_changes_and_captures_each_write_once() {
        OutboxTables t = OutboxTables.create(database, "again", "id int PRIMARY KEY, name text");
        t.execute("INSERT INTO $T VALUES (1, 'a')");
        long trimmedThrough = t.scalar("SELECT trimmed_through FROM public." + t.table + "_outbox_state");

        t.outbox.install(database.dataSource());
        t.execute("UPDATE $T SET name = 'b'");

        assertThat(t.capturedWithoutVersions()).containsExactly("{\"$operation\":\"I\",\"id\":1,\"name\":\"a\"}",
                "{\"$operation\":\"U\",\"$changed\":[\"name\"],\"id\":1,\"name\":\"b\"}");
        assertThat(t.scalar("SELECT trimmed_through FROM public." + t.table + "_outbox_state")).isEqualTo(trimmedThrough);
        assertThat(t.scalar("SELECT count(*) FROM pg_trigger WHERE tgrelid = 'public." + t.table + "'::regclass"))
                .isEqualTo(4);
    }

    @Test
    void upgrading_after_adding_a_column_captures_it() {
        OutboxTables t = OutboxTables.create(database, "grow", "id int PRIMARY KEY, name text");
        t.execute("ALTER TABLE $T ADD COLUMN qty int");
        t.execute("INSERT INTO $T VALUES (1, 'a', 1)");

        assertThatThrownBy(() -> t.outbox.install(database.dataSource())) // the JSON would change: not silently
                .extracting(e -> ((TidemarkException) e).code()).isEqualTo(ErrorCode.SCHEMA_DRIFT);
        t.outbox.upgrade(database.dataSource());
        t.execute("UPDATE $T SET qty = 2");

        assertThat(t.capturedWithoutVersions()).containsExactly("{\"$operation\":\"I\",\"id\":1,\"name\":\"a\"}",
                "{\"$operation\":\"U\",\"$changed\":[\"qty\"],\"id\":1,\"name\":\"a\",\"qty\":2}");
    }

    @Test
    void a_captured_column_cannot_be_dropped_while_the_outbox_captures_it() {
        OutboxTables t = OutboxTables.create(database, "keep", "id int PRIMARY KEY, name text, note text");

        assertThatThrownBy(() -> t.execute("ALTER TABLE $T DROP COLUMN note"))
                .hasMessageContaining("view " + t.table + "_outbox_columns depends on column note");
        // The documented migration: drop the guard view, change the table, install the new shape, in one transaction.
        String reinstall = io.tidemark.postgres.PostgresOutbox.forTable("public." + t.table).key("id").columns("name")
                .build().script();
        t.execute("BEGIN; DROP VIEW public." + t.table + "_outbox_columns; ALTER TABLE $T DROP COLUMN note; "
                + reinstall + " COMMIT;");
        t.execute("INSERT INTO $T VALUES (1, 'a'); UPDATE $T SET name = 'b'");

        assertThat(t.capturedWithoutVersions()).containsExactly("{\"$operation\":\"I\",\"id\":1,\"name\":\"a\"}",
                "{\"$operation\":\"U\",\"$changed\":[\"name\"],\"id\":1,\"name\":\"b\"}");
    }

    @Test
    void a_renamed_column_is_captured_when_the_script_is_regenerated_in_the_same_migration() {
        OutboxTables t = OutboxTables.create(database, "renamed", "id int PRIMARY KEY, name text");
        String reinstall = io.tidemark.postgres.PostgresOutbox.forTable("public." + t.table).key("id").columns("title")
                .build().script();

        t.execute("BEGIN; ALTER TABLE $T RENAME COLUMN name TO title; " + reinstall + " COMMIT;");
        t.execute("INSERT INTO $T VALUES (1, 'a'); UPDATE $T SET title = 'b'");

        assertThat(t.capturedWithoutVersions()).containsExactly("{\"$operation\":\"I\",\"id\":1,\"title\":\"a\"}",
                "{\"$operation\":\"U\",\"$changed\":[\"title\"],\"id\":1,\"title\":\"b\"}");
    }

    @Test
    void a_failed_install_leaves_nothing_behind() {
        // The trim function is created last, after the tables, the capture function, the triggers and the change
        // function: a function of that name returning text makes the last step fail, and everything before must go
        // too. (Not the change function: install refuses to take over a change function it did not generate.)
        database.execute("CREATE TABLE public.half (id int PRIMARY KEY, name text);"
                + " CREATE FUNCTION public.half_outbox_trim(through_version bigint, max_rows integer) RETURNS text"
                + " LANGUAGE sql AS $$ SELECT 'mine' $$");
        PostgresOutbox outbox = PostgresOutbox.forTable("public.half").build();

        assertThatThrownBy(() -> outbox.install(database.dataSource()))
                .isInstanceOf(TidemarkException.class)
                .hasMessageContaining("Could not install the outbox of public.half")
                .hasMessageContaining("cannot change return type");
        assertThat(relations("half%")).containsExactly("half", "half_pkey");
        assertThat(count("SELECT count(*) FROM pg_trigger WHERE tgrelid = 'public.half'::regclass")).isZero();
        assertThat(count("SELECT count(*) FROM pg_proc WHERE proname LIKE 'half%'")).isEqualTo(1);
    }

    @Test
    void a_declared_column_that_does_not_exist_is_named() {
        database.execute("CREATE TABLE public.typo (id int PRIMARY KEY, name text)");
        PostgresOutbox outbox = PostgresOutbox.forTable("public.typo").columns("name", "nmae").build();

        assertThatThrownBy(() -> outbox.install(database.dataSource()))
                .hasMessageContaining("Table public.typo has no column \"nmae\"; the columns are [id, name]")
                .extracting(e -> ((TidemarkException) e).code()).isEqualTo(ErrorCode.SCHEMA_UNSUPPORTED);
    }

    @Test
    void the_preflight_of_the_script_refuses_what_would_break_writes_later() throws SQLException {
        database.execute("CREATE TABLE public.pre (id int PRIMARY KEY, code text, name text)");
        String missingColumn = PostgresOutbox.forTable("public.pre").key("id").columns("nope").build().script();
        String notUnique = PostgresOutbox.forTable("public.pre").key("code").columns("name").build().script();
        String good = PostgresOutbox.forTable("public.pre").key("id").columns("name").build().script();

        assertThat(runScript(missingColumn, Connection.TRANSACTION_READ_COMMITTED)).contains("has no column nope");
        assertThat(runScript(notUnique, Connection.TRANSACTION_READ_COMMITTED))
                .contains("The key (code) of \"public\".\"pre\" is not its primary key or a unique");
        assertThat(runScript(good, Connection.TRANSACTION_REPEATABLE_READ))
                .contains("Install the Tidemark outbox of \"public\".\"pre\" at READ COMMITTED, not repeatable read");
        assertThat(relations("pre%")).containsExactly("pre", "pre_pkey");
        assertThat(runScript(good, Connection.TRANSACTION_READ_COMMITTED)).isNull();
    }

    @Test
    void a_table_without_a_primary_key_or_that_is_not_a_table_is_refused_with_what_to_do() {
        database.execute("CREATE TABLE public.nokey (id int, name text); CREATE VIEW public.aview AS SELECT 1 AS id");

        assertThatThrownBy(() -> PostgresOutbox.forTable("public.nokey").build().install(database.dataSource()))
                .hasMessageContaining("has no primary key").hasMessageContaining("key(...)");
        assertThatThrownBy(() -> PostgresOutbox.forTable("public.aview").build().install(database.dataSource()))
                .hasMessageContaining("is not an ordinary table");
        assertThatThrownBy(() -> PostgresOutbox.forTable("public.absent").build().install(database.dataSource()))
                .hasMessageContaining("Table public.absent does not exist")
                .extracting(e -> ((TidemarkException) e).code()).isEqualTo(ErrorCode.SCHEMA_UNSUPPORTED);
    }

    @Test
    void an_existing_table_of_the_outbox_name_that_is_not_an_outbox_is_refused_and_left_alone() {
        database.execute("CREATE TABLE public.clash (id int PRIMARY KEY, name text);"
                + "CREATE TABLE public.clash_outbox (id bigserial PRIMARY KEY, payload text);"
                + "INSERT INTO public.clash_outbox (payload) VALUES ('theirs')");

        assertThatThrownBy(() -> PostgresOutbox.forTable("public.clash").build().install(database.dataSource()))
                .hasMessageContaining("\"public\".\"clash_outbox\" already exists and is not a Tidemark outbox")
                .extracting(e -> ((TidemarkException) e).code()).isEqualTo(ErrorCode.SCHEMA_UNSUPPORTED);
        database.execute("DO $$ BEGIN\n"
                + "  ASSERT (SELECT payload FROM public.clash_outbox) = 'theirs';\n"
                + "  ASSERT NOT EXISTS (SELECT FROM pg_trigger WHERE tgrelid = 'public.clash'::regclass);\n"
                + "END $$;");
    }

    @Test
    void a_declared_unique_key_is_accepted_in_place_of_a_primary_key() {
        database.execute("CREATE TABLE public.natural (code text NOT NULL UNIQUE, name text)");
        PostgresOutbox outbox = PostgresOutbox.forTable("public.natural").key("code").build();

        outbox.install(database.dataSource());
        database.execute("INSERT INTO public.natural VALUES ('x', 'y'); DELETE FROM public.natural");

        assertThat(OutboxTables.call(database.dataSource(), outbox.changeFunction(), "{\"fromVersion\":1}")
                .at("/Metadata/Sync/Type").asText()).isEqualTo("Full");
    }

    @Test
    void an_owner_without_superuser_rights_installs_and_a_reader_reads_with_plain_grants() throws SQLException {
        DataSource owner = database.createRole("outbox_owner");
        DataSource reader = database.createRole("outbox_reader");
        database.execute("CREATE SCHEMA owned AUTHORIZATION outbox_owner; GRANT USAGE ON SCHEMA owned TO outbox_reader");
        execute(owner, "CREATE TABLE owned.items (id int PRIMARY KEY, name text)");
        PostgresOutbox outbox = PostgresOutbox.forTable("owned.items").build();

        outbox.install(owner);
        execute(owner, "INSERT INTO owned.items VALUES (1, 'a')");

        assertThatThrownBy(() -> OutboxTables.call(reader, outbox.changeFunction(), "{\"fromVersion\":1}"))
                .rootCause().hasMessageContaining("permission denied");
        execute(owner, "GRANT SELECT ON owned.items, owned.items_outbox, owned.items_outbox_state TO outbox_reader");
        assertThat(OutboxTables.call(reader, outbox.changeFunction(), "{\"mode\":\"seed\"}").at("/Metadata/Sync/Version")
                .asLong()).isPositive();
    }

    @Test
    void a_role_that_does_not_own_the_table_gets_permission_denied() {
        DataSource stranger = database.createRole("outbox_stranger");
        database.execute("CREATE TABLE public.not_yours (id int PRIMARY KEY); GRANT USAGE, CREATE ON SCHEMA public TO outbox_stranger");

        assertThatThrownBy(() -> PostgresOutbox.forTable("public.not_yours").key("id").columns("id").build()
                .install(stranger))
                .isInstanceOf(TidemarkException.class)
                .extracting(e -> ((TidemarkException) e).code()).isEqualTo(ErrorCode.PERMISSION_DENIED);
    }

    @Test
    void application_instances_installing_at_the_same_time_all_succeed() throws Exception {
        database.execute("CREATE TABLE public.racy (id int PRIMARY KEY, name text)");
        PostgresOutbox outbox = PostgresOutbox.forTable("public.racy").build();
        CyclicBarrier start = new CyclicBarrier(4);
        List<CompletableFuture<Void>> installs = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            installs.add(CompletableFuture.runAsync(() -> {
                try {
                    start.await(30, TimeUnit.SECONDS);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
                outbox.install(database.dataSource());
            }));
        }
        CompletableFuture.allOf(installs.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);

        database.execute("INSERT INTO public.racy VALUES (1, 'a')");
        assertThat(count("SELECT count(*) FROM public.racy_outbox")).isEqualTo(1);
    }

    @Test
    void uninstall_removes_everything_and_can_run_twice() {
        OutboxTables t = OutboxTables.create(database, "gone", "id int PRIMARY KEY, name text");
        t.execute("INSERT INTO $T VALUES (1, 'a')");

        t.outbox.uninstall(database.dataSource());
        t.outbox.uninstall(database.dataSource());
        t.execute("INSERT INTO $T VALUES (2, 'b'); TRUNCATE $T");

        assertThat(relations(t.table + "%")).containsExactly(t.table, t.table + "_pkey");
        assertThat(count("SELECT count(*) FROM pg_proc WHERE proname LIKE '" + t.table + "%'")).isZero();
    }

    private String runScript(String script, int isolation) throws SQLException {
        try (Connection c = database.dataSource().getConnection(); Statement s = c.createStatement()) {
            c.setAutoCommit(false);
            c.setTransactionIsolation(isolation);
            try {
                s.execute(script);
                c.commit();
                return null;
            } catch (SQLException e) {
                c.rollback();
                return e.getMessage();
            }
        }
    }

    private List<String> relations(String pattern) {
        List<String> names = new ArrayList<>();
        try (Connection c = database.dataSource().getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT relname FROM pg_class WHERE relnamespace = 'public'::regnamespace"
                     + " AND relname LIKE '" + pattern + "' ORDER BY relname")) {
            while (rs.next()) {
                names.add(rs.getString(1));
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
        return names;
    }

    private long count(String sql) {
        try (Connection c = database.dataSource().getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void execute(DataSource dataSource, String sql) throws SQLException {
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }
}
