package io.tidemark.postgres.outbox;

import io.tidemark.postgres.PostgresOutbox;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Installing again over an installed outbox: the same configuration changes nothing at all; another one is refused
 * with every difference listed, and nothing in the catalog changes. (Uses install only, so that it also runs
 * against a version without upgrade: there, every refusal test here fails, because install silently replaced.)
 */
@EmbeddedPostgresTest
class OutboxReinstallTest {

    private final TestDatabase database;

    OutboxReinstallTest(TestDatabase database) {
        this.database = database;
    }

    @Test
    void installing_the_same_configuration_again_writes_nothing() {
        OutboxTables t = OutboxTables.create(database, "same", "id int PRIMARY KEY, name text",
                b -> b.payloadKey("name", "Name"));
        t.execute("INSERT INTO $T VALUES (1, 'a')");
        String before = CatalogSnapshot.of(database, "public");

        PostgresOutbox.forTable("public." + t.table).payloadKey("name", "Name").build().install(database.dataSource());
        t.outbox.install(database.dataSource());

        assertThat(CatalogSnapshot.of(database, "public")).isEqualTo(before);
        t.execute("UPDATE $T SET name = 'b'");
        assertThat(t.capturedWithoutVersions()).containsExactly("{\"$operation\":\"I\",\"id\":1,\"Name\":\"a\"}",
                "{\"$operation\":\"U\",\"$changed\":[\"Name\"],\"id\":1,\"Name\":\"b\"}");
    }

    @Test
    void an_application_role_that_owns_nothing_may_call_install_at_start_up() {
        OutboxTables t = OutboxTables.create(database, "startup", "id int PRIMARY KEY, name text");
        DataSource application = database.createRole("outbox_application");
        String before = CatalogSnapshot.of(database, "public");

        t.outbox.install(application);

        assertThat(CatalogSnapshot.of(database, "public")).isEqualTo(before);
        assertThatThrownBy(() -> PostgresOutbox.forTable("public." + t.table).payloadKey("name", "Name").build()
                .install(application))
                .as("another configuration is drift, not a missing privilege")
                .extracting(e -> ((TidemarkException) e).code()).isEqualTo(ErrorCode.SCHEMA_DRIFT);
    }

    @Test
    void install_and_upgrade_pin_the_search_path_so_no_function_ahead_of_pg_catalog_runs_as_the_installer()
            throws SQLException {
        DataSource owner = database.createRole("outbox_pinned");
        database.execute("CREATE SCHEMA pinned AUTHORIZATION outbox_pinned; CREATE SCHEMA trap;"
                + " GRANT USAGE ON SCHEMA trap TO outbox_pinned;"
                + " CREATE FUNCTION trap.to_regclass(text) RETURNS regclass LANGUAGE plpgsql AS"
                + " $$ BEGIN RAISE EXCEPTION 'trap.to_regclass ran as %', current_user; END $$;"
                + " ALTER ROLE outbox_pinned SET search_path = trap, pg_catalog, public");
        try (Connection c = owner.getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE pinned.items (id int PRIMARY KEY, name text)");
        }
        PostgresOutbox outbox = PostgresOutbox.forTable("pinned.items").build();

        outbox.install(owner);
        outbox.install(owner);
        PostgresOutbox.forTable("pinned.items").payloadKey("name", "Name").build().upgrade(owner);

        assertThat(PostgresOutbox.forTable("pinned.items").payloadKey("name", "Name").build()
                .differences(database.dataSource())).isEmpty();
    }

    @Test
    void installers_of_different_configurations_at_the_same_time_install_one_and_refuse_the_other()
            throws Exception {
        database.execute("CREATE TABLE public.contended (id int PRIMARY KEY, name text)");
        List<PostgresOutbox> configurations = List.of(PostgresOutbox.forTable("public.contended").build(),
                PostgresOutbox.forTable("public.contended").payloadKey("name", "Name").build());
        CyclicBarrier start = new CyclicBarrier(configurations.size());
        List<CompletableFuture<PostgresOutbox>> installs = new ArrayList<>();
        for (PostgresOutbox outbox : configurations) {
            installs.add(CompletableFuture.supplyAsync(() -> {
                try {
                    start.await(30, TimeUnit.SECONDS);
                    outbox.install(database.dataSource());
                    return outbox;
                } catch (TidemarkException e) {
                    assertThat(e.code()).isEqualTo(ErrorCode.SCHEMA_DRIFT);
                    return null;
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }));
        }
        List<PostgresOutbox> installed = new ArrayList<>();
        for (CompletableFuture<PostgresOutbox> install : installs) {
            PostgresOutbox outbox = install.get(60, TimeUnit.SECONDS);
            if (outbox != null) {
                installed.add(outbox);
            }
        }

        assertThat(installed).as("exactly one installs; the other, which read after it committed, is refused")
                .hasSize(1);
        assertThat(installed.get(0).differences(database.dataSource())).isEmpty();
    }

    @Test
    void another_payload_key_is_refused_with_the_difference_and_changes_nothing() {
        OutboxTables t = OutboxTables.create(database, "pkey", "id int PRIMARY KEY, name text");

        String message = refused(t, b -> b.payloadKey("name", "Name"));

        assertThat(message).contains("The outbox of public." + t.table + " is installed with other options")
                .contains("1 difference(s): payload keys: installed none (every column under its own name),"
                        + " requested name -> Name.")
                .contains("PostgresOutbox.upgrade(dataSource)");
        t.execute("INSERT INTO $T VALUES (1, 'a')");
        assertThat(t.capturedWithoutVersions()).containsExactly("{\"$operation\":\"I\",\"id\":1,\"name\":\"a\"}");
    }

    @Test
    void another_column_list_is_refused_with_the_difference_and_changes_nothing() {
        OutboxTables t = OutboxTables.create(database, "cols", "id int PRIMARY KEY, name text, qty int");

        String message = refused(t, b -> b.columns("name"));

        assertThat(message).contains("1 difference(s): columns: installed id, name, qty, requested id, name.");
    }

    @Test
    void a_column_added_to_a_table_captured_whole_is_a_difference_too() {
        OutboxTables t = OutboxTables.create(database, "grown", "id int PRIMARY KEY, name text");
        t.execute("ALTER TABLE $T ADD COLUMN qty int");

        String message = refused(t, b -> b);

        assertThat(message).contains("1 difference(s): columns: installed id, name, requested id, name, qty.");
    }

    @Test
    void another_change_function_is_refused_with_the_difference_and_changes_nothing() {
        OutboxTables t = OutboxTables.create(database, "fn", "id int PRIMARY KEY, name text");

        String message = refused(t, b -> b.changeFunction("public." + t.table + "_feed"));

        assertThat(message).contains("1 difference(s): change function: installed public." + t.table
                + "_changes, requested public." + t.table + "_feed.");
    }

    @Test
    void every_difference_is_listed_at_once() {
        OutboxTables t = OutboxTables.create(database, "many", "id int PRIMARY KEY, name text, qty int");

        String message = refused(t, b -> b.columns("name").payloadKey("name", "Name")
                .changeFunction("public." + t.table + "_feed").truncate(io.tidemark.postgres.TruncatePolicy.RECORD_DELETES)
                .notifications(false));

        assertThat(message).contains("5 difference(s): change function: installed public." + t.table
                        + "_changes, requested public." + t.table + "_feed; ")
                .contains("; columns: installed id, name, qty, requested id, name; ")
                .contains("; payload keys: installed none (every column under its own name), requested name -> Name; ")
                .contains("; truncate policy: installed REFUSE, requested RECORD_DELETES; ")
                .contains("; notification channel: installed tidemark, requested none (notifications off).");
    }

    @Test
    void another_outbox_table_for_the_same_table_is_refused() {
        OutboxTables t = OutboxTables.create(database, "moved", "id int PRIMARY KEY, name text");

        String message = refused(t, b -> b.outboxTable("public." + t.table + "_box"));

        assertThat(message).contains("The outbox of public." + t.table + " is not installed, and installing public."
                        + t.table + "_box as configured would conflict with what the database holds")
                .contains("outbox table: installed public." + t.table + "_outbox, requested public." + t.table + "_box")
                .contains("An upgrade cannot do it: upgrade does not move an outbox");
    }

    /** A generated trigger that exists but does not fire in ordinary sessions captures nothing: never unnoticed. */
    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "DISABLE TRIGGER        | update | disabled (changes are not captured)",
        "ENABLE REPLICA TRIGGER | insert | enabled for replica sessions only (ordinary writes are not captured)"})
    void a_trigger_that_does_not_fire_in_ordinary_sessions_is_reported(String alter, String event, String state) {
        OutboxTables t = OutboxTables.create(database, "off", "id int PRIMARY KEY, name text");
        t.execute("ALTER TABLE $T " + alter + " " + t.table + "_outbox_" + event);

        String message = refused(t, b -> b);

        assertThat(message).contains("trigger " + t.table + "_outbox_" + event + " on public." + t.table
                + ": installed " + state + ", requested enabled");
    }

    @Test
    void a_trigger_redefined_by_hand_to_fire_on_other_events_is_reported() {
        OutboxTables t = OutboxTables.create(database, "redefined", "id int PRIMARY KEY, name text");
        // Still named as generated, still calls the capture function, still enabled: but inserts go uncaptured
        // and updates are captured twice.
        t.execute("CREATE OR REPLACE TRIGGER " + t.table + "_outbox_insert AFTER UPDATE ON $T"
                + " REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows"
                + " FOR EACH STATEMENT EXECUTE FUNCTION public." + t.table + "_outbox_capture()");

        String message = refused(t, b -> b);

        assertThat(message).contains("trigger " + t.table + "_outbox_insert on public." + t.table
                + ": installed a definition other than the generated one (CREATE TRIGGER " + t.table
                + "_outbox_insert AFTER UPDATE ON public." + t.table);
    }

    @Test
    void a_change_function_of_that_name_that_reads_another_outbox_is_refused_rather_than_replaced() {
        OutboxTables first = OutboxTables.create(database, "first", "id int PRIMARY KEY, name text",
                b -> b.changeFunction("public.shared_changes"));
        first.execute("INSERT INTO $T VALUES (1, 'first')");
        database.execute("CREATE TABLE public.second (id int PRIMARY KEY, name text)");
        PostgresOutbox second = PostgresOutbox.forTable("public.second").changeFunction("public.shared_changes")
                .build();
        String before = CatalogSnapshot.of(database, "public");

        assertThatThrownBy(() -> second.install(database.dataSource()))
                .hasMessageContaining("change function public.shared_changes(json): installed reads another outbox"
                        + " (public." + first.table + "_outbox), requested reads public.second_outbox")
                .hasMessageContaining("changeFunction(...)")
                .extracting(e -> ((TidemarkException) e).code()).isEqualTo(ErrorCode.SCHEMA_DRIFT);
        assertThatThrownBy(() -> second.upgrade(database.dataSource()))
                .hasMessageContaining("public.shared_changes(json) reads public." + first.table + "_outbox")
                .extracting(e -> ((TidemarkException) e).code()).isEqualTo(ErrorCode.SCHEMA_CHANGE_REFUSED);

        assertThat(CatalogSnapshot.of(database, "public")).as("nothing changed").isEqualTo(before);
        assertThat(first.sync(0).get("Data").toString()).contains("\"first\"");
    }

    @Test
    void a_capture_function_edited_by_hand_is_reported() {
        OutboxTables t = OutboxTables.create(database, "edited", "id int PRIMARY KEY, name text");
        t.execute("CREATE OR REPLACE FUNCTION public." + t.table + "_outbox_capture() RETURNS trigger"
                + " LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$");

        String message = refused(t, b -> b);

        assertThat(message).contains("function \"public\".\"" + t.table + "_outbox_capture\"(): installed a body"
                + " other than the generated one");
    }

    @Test
    void a_capture_function_whose_settings_were_reset_by_hand_is_reported_since_the_json_would_follow_the_session() {
        OutboxTables t = OutboxTables.create(database, "unpinned", "id int PRIMARY KEY, at timestamptz");
        t.execute("ALTER FUNCTION public." + t.table + "_outbox_capture() RESET ALL");
        t.execute("ALTER FUNCTION public." + t.table + "_outbox_capture() SECURITY INVOKER");

        String message = refused(t, b -> b);

        assertThat(message).contains("function \"public\".\"" + t.table + "_outbox_capture\"(): installed"
                + " attributes (none), requested attributes (SECURITY DEFINER, TimeZone=UTC, extra_float_digits=1,"
                + " bytea_output=hex, IntervalStyle=iso_8601)");
        t.outbox.upgrade(database.dataSource());
        assertThat(t.outbox.differences(database.dataSource())).isEmpty();
    }

    @Test
    void a_record_this_version_cannot_read_is_reported_rather_than_guessed_at() {
        OutboxTables t = OutboxTables.create(database, "future", "id int PRIMARY KEY, name text");
        t.execute("COMMENT ON TABLE public." + t.table + "_outbox_state IS '{\"tidemark\":\"outbox\",\"format\":2}'");

        String message = refused(t, b -> b);

        assertThat(message).contains("1 difference(s): recorded installation: installed unreadable (format 2, this"
                + " version reads format 1), requested a record this version reads.");
    }

    /** Installs {@code configure}d over {@code t}'s outbox, expects SCHEMA_DRIFT and an unchanged catalog. */
    private String refused(OutboxTables t, UnaryOperator<PostgresOutbox.Builder> configure) {
        PostgresOutbox other = configure.apply(PostgresOutbox.forTable("public." + t.table)).build();
        String before = CatalogSnapshot.of(database, "public");

        Throwable thrown = org.assertj.core.api.Assertions.catchThrowable(() -> other.install(database.dataSource()));

        assertThat(thrown).as("install of another configuration").isInstanceOf(TidemarkException.class);
        assertThat(((TidemarkException) thrown).code()).isEqualTo(ErrorCode.SCHEMA_DRIFT);
        assertThat(CatalogSnapshot.of(database, "public")).as("catalog after the refused install").isEqualTo(before);
        assertThatThrownBy(() -> other.install(database.dataSource())).as("refused again").isInstanceOf(TidemarkException.class);
        return thrown.getMessage();
    }
}
