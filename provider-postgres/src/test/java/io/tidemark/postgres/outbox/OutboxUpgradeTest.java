package io.tidemark.postgres.outbox;

import io.tidemark.postgres.CaptureShape;
import io.tidemark.postgres.OutboxDifference;
import io.tidemark.postgres.PostgresOutbox;
import io.tidemark.sync.Change;
import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.InitialSync;
import io.tidemark.sync.JdbcWatermarkStore;
import io.tidemark.sync.Outcome;
import io.tidemark.sync.SyncEngine;
import io.tidemark.sync.SyncType;
import io.tidemark.sync.TidemarkException;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.RecordingDestination;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Changing an installed outbox on purpose: upgrade, differences and the upgrade script; what happens to the changes
 * already captured; concurrent writers and installers; and outboxes installed before installs were recorded.
 */
@EmbeddedPostgresTest
class OutboxUpgradeTest {

    /** The script of {@code sales.items} exactly as the version before install records generated it. */
    private static final Path LEGACY_SCRIPT = Path.of("src/test/resources/outbox/legacy-sales_items.sql");

    /**
     * The script of {@code sales.items} exactly as the previous version generated it (with its record): a capture
     * function that pins {@code SET search_path} and leaves names unqualified, and notifies on every write.
     */
    static final Path PREVIOUS_SCRIPT = Path.of("src/test/resources/outbox/before-armed-wake-ups-sales_items.sql");

    /**
     * The scripts of {@code sales.items} (full images) and {@code sales.items_k} (keys) exactly as the version before
     * generated them (with their records): a change function in SQL, planned again on every call before
     * PostgreSQL 18.
     */
    private static final Path SQL_CHANGE_FUNCTION_SCRIPT =
            Path.of("src/test/resources/outbox/before-cached-plans-sales_items.sql");
    private static final Path SQL_CHANGE_FUNCTION_KEYS_SCRIPT =
            Path.of("src/test/resources/outbox/before-cached-plans-sales_items_keys.sql");

    private final TestDatabase database;

    OutboxUpgradeTest(TestDatabase database) {
        this.database = database;
    }

    @Test
    void differences_lists_without_changing_anything_and_upgrade_applies_them() {
        OutboxTables t = OutboxTables.create(database, "diff", "id int PRIMARY KEY, name text");
        PostgresOutbox renamed = PostgresOutbox.forTable("public." + t.table).payloadKey("name", "Name").build();
        String before = CatalogSnapshot.of(database, "public");

        List<OutboxDifference> differences = renamed.differences(database.dataSource());

        assertThat(differences).containsExactly(new OutboxDifference("payload keys",
                "none (every column under its own name)", "name -> Name"));
        assertThat(CatalogSnapshot.of(database, "public")).isEqualTo(before);
        assertThat(t.outbox.differences(database.dataSource())).isEmpty();

        assertThat(renamed.upgrade(database.dataSource())).isEqualTo(differences);
        assertThat(renamed.differences(database.dataSource())).isEmpty();
        assertThat(renamed.upgrade(database.dataSource())).isEmpty();
        String upgraded = CatalogSnapshot.of(database, "public");
        renamed.install(database.dataSource());
        assertThat(CatalogSnapshot.of(database, "public")).as("install after the upgrade").isEqualTo(upgraded);
        assertThat(t.outbox.differences(database.dataSource())).containsExactly(new OutboxDifference("payload keys",
                "name -> Name", "none (every column under its own name)"));
    }

    @Test
    void nothing_installed_is_one_difference_and_upgrade_installs_it() {
        database.execute("CREATE TABLE public.fresh (id int PRIMARY KEY, name text)");
        PostgresOutbox outbox = PostgresOutbox.forTable("public.fresh").build();

        List<OutboxDifference> differences = outbox.differences(database.dataSource());
        assertThat(differences).containsExactly(
                new OutboxDifference("outbox public.fresh_outbox", "not installed", "installed"));
        assertThat(outbox.upgrade(database.dataSource())).as("what upgrade did").isEqualTo(differences);
        assertThat(outbox.differences(database.dataSource())).isEmpty();
    }

    @Test
    void changes_captured_before_an_upgrade_are_delivered_in_the_shape_they_were_captured_with() {
        OutboxTables t = OutboxTables.create(database, "pending", "id int PRIMARY KEY, name text");
        RecordingDestination out = new RecordingDestination();
        try (SyncEngine engine = OutboxTables.engine(database, "pending", JdbcWatermarkStore.create(database.dataSource()),
                out).track(t.outbox.track("Pending").initialSync(InitialSync.INCREMENTAL)).build()) {
            assertThat(engine.runOnce().get("Pending").outcome()).isEqualTo(Outcome.SEEDED);
            t.execute("INSERT INTO $T VALUES (1, 'before'); UPDATE $T SET name = 'before 2'");

            PostgresOutbox renamed = PostgresOutbox.forTable("public." + t.table).payloadKey("name", "Name").build();
            renamed.upgrade(database.dataSource());
            t.execute("INSERT INTO $T VALUES (2, 'after'); UPDATE $T SET name = 'after 2' WHERE id = 2");

            assertThat(engine.runOnce().get("Pending").outcome()).isEqualTo(Outcome.DELIVERED);
            assertThat(out.changes()).extracting(c -> c.fields().toString()).containsExactly(
                    "{\"id\":1,\"name\":\"before\"}", "{\"id\":1,\"name\":\"before 2\"}",
                    "{\"id\":2,\"Name\":\"after\"}", "{\"id\":2,\"Name\":\"after 2\"}");
            assertThat(engine.runOnce().get("Pending").outcome()).isEqualTo(Outcome.NO_CHANGES);
        }
    }

    @Test
    void upgrading_to_another_change_function_drops_the_old_one_and_the_new_one_delivers() {
        OutboxTables t = OutboxTables.create(database, "feed", "id int PRIMARY KEY, name text");
        t.execute("INSERT INTO $T VALUES (1, 'a')");
        PostgresOutbox feed = PostgresOutbox.forTable("public." + t.table).changeFunction("public." + t.table + "_feed")
                .build();

        String script = feed.upgradeScript(database.dataSource());
        assertThat(script).contains("--   change function: installed public." + t.table + "_changes, requested public."
                        + t.table + "_feed")
                .contains("DROP FUNCTION IF EXISTS \"public\".\"" + t.table + "_changes\"(json);");
        assertThat(feed.upgrade(database.dataSource())).extracting(OutboxDifference::option)
                .containsExactly("change function");

        assertThat(t.scalar("SELECT count(*) FROM pg_proc WHERE proname = '" + t.table + "_changes'")).isZero();
        RecordingDestination out = new RecordingDestination();
        try (SyncEngine engine = OutboxTables.engine(database, "feed", JdbcWatermarkStore.create(database.dataSource()),
                out).track(feed.track("Feed")).build()) {
            engine.runOnce();
            t.execute("INSERT INTO $T VALUES (2, 'b')");
            engine.runOnce();
        }
        List<ChangeBatch> batches = out.batches();
        assertThat(batches).extracting(ChangeBatch::syncType).containsExactly(SyncType.FULL, SyncType.DIFF);
        assertThat(batches.get(0).changes()).extracting(c -> c.fields().get("id").asInt()).containsExactly(1);
        assertThat(batches.get(1).changes()).extracting(c -> c.fields().get("id").asInt()).containsExactly(2);
    }

    @Test
    void the_upgrade_script_runs_as_a_migration_and_leaves_nothing_to_differ() throws SQLException {
        OutboxTables t = OutboxTables.create(database, "migrated", "id int PRIMARY KEY, name text, qty int");
        t.execute("ALTER TABLE $T DISABLE TRIGGER " + t.table + "_outbox_insert");
        t.execute("CREATE TRIGGER stray AFTER DELETE ON $T FOR EACH STATEMENT EXECUTE FUNCTION public." + t.table
                + "_outbox_capture()");
        PostgresOutbox narrower = PostgresOutbox.forTable("public." + t.table).columns("qty").build();
        String script = narrower.upgradeScript(database.dataSource());

        try (Connection c = database.dataSource().getConnection(); Statement s = c.createStatement()) {
            c.setAutoCommit(false);
            s.execute(script);
            c.commit();
        }

        assertThat(narrower.differences(database.dataSource())).isEmpty();
        t.execute("INSERT INTO $T VALUES (1, 'a', 1); DELETE FROM $T");
        assertThat(t.capturedWithoutVersions()).containsExactly("{\"$operation\":\"I\",\"id\":1,\"qty\":1}",
                "{\"$operation\":\"D\",\"id\":1}");
    }

    @Test
    void upgrade_makes_triggers_enabled_for_replica_only_or_redefined_by_hand_fire_as_generated() {
        OutboxTables t = OutboxTables.create(database, "repaired", "id int PRIMARY KEY, name text");
        t.execute("ALTER TABLE $T ENABLE REPLICA TRIGGER " + t.table + "_outbox_update");
        t.execute("CREATE OR REPLACE TRIGGER " + t.table + "_outbox_insert AFTER DELETE ON $T"
                + " REFERENCING OLD TABLE AS deleted FOR EACH STATEMENT EXECUTE FUNCTION public." + t.table
                + "_outbox_capture()");

        assertThat(t.outbox.upgrade(database.dataSource())).extracting(OutboxDifference::option).containsExactly(
                "trigger " + t.table + "_outbox_insert on public." + t.table,
                "trigger " + t.table + "_outbox_update on public." + t.table);

        assertThat(t.outbox.differences(database.dataSource())).isEmpty();
        t.execute("INSERT INTO $T VALUES (1, 'a'); UPDATE $T SET name = 'b'; DELETE FROM $T");
        assertThat(t.capturedWithoutVersions()).containsExactly("{\"$operation\":\"I\",\"id\":1,\"name\":\"a\"}",
                "{\"$operation\":\"U\",\"$changed\":[\"name\"],\"id\":1,\"name\":\"b\"}",
                "{\"$operation\":\"D\",\"id\":1}");
    }

    @Test
    void upgrade_refuses_to_move_the_outbox_and_changes_nothing() {
        OutboxTables t = OutboxTables.create(database, "stay", "id int PRIMARY KEY, name text");
        String before = CatalogSnapshot.of(database, "public");

        assertThatThrownBy(() -> PostgresOutbox.forTable("public." + t.table).outboxTable("public." + t.table + "_box")
                .build().upgrade(database.dataSource()))
                .hasMessageContaining("upgrade does not move an outbox")
                .extracting(e -> ((TidemarkException) e).code()).isEqualTo(ErrorCode.SCHEMA_CHANGE_REFUSED);
        assertThat(CatalogSnapshot.of(database, "public")).isEqualTo(before);
    }

    @Test
    void an_upgrade_under_concurrent_writes_and_a_concurrent_upgrade_loses_no_change() throws Exception {
        OutboxTables t = OutboxTables.create(database, "busy", "id int PRIMARY KEY, name text");
        RecordingDestination out = new RecordingDestination();
        try (SyncEngine engine = OutboxTables.engine(database, "busy", JdbcWatermarkStore.create(database.dataSource()),
                out).track(t.outbox.track("Busy").initialSync(InitialSync.INCREMENTAL)).build()) {
            engine.runOnce();
            Set<Integer> committed = ConcurrentHashMap.newKeySet();
            AtomicInteger ids = new AtomicInteger();
            AtomicBoolean stop = new AtomicBoolean();
            List<CompletableFuture<Void>> writers = new ArrayList<>();
            for (int w = 0; w < 3; w++) {
                writers.add(CompletableFuture.runAsync(() -> write(t, ids, committed, stop)));
            }
            awaitAtLeast(committed, 50);

            PostgresOutbox renamed = PostgresOutbox.forTable("public." + t.table).payloadKey("name", "Name").build();
            CyclicBarrier together = new CyclicBarrier(2);
            List<CompletableFuture<List<OutboxDifference>>> upgrades = new ArrayList<>();
            for (int i = 0; i < 2; i++) {
                upgrades.add(CompletableFuture.supplyAsync(() -> {
                    await(together);
                    return renamed.upgrade(database.dataSource());
                }));
            }
            List<List<OutboxDifference>> done = new ArrayList<>();
            for (CompletableFuture<List<OutboxDifference>> upgrade : upgrades) {
                done.add(upgrade.get(60, TimeUnit.SECONDS));
            }
            int atUpgrade = committed.size();
            awaitAtLeast(committed, atUpgrade + 50);
            stop.set(true);
            for (CompletableFuture<Void> writer : writers) {
                writer.get(60, TimeUnit.SECONDS);
            }

            // One upgrade did the work; the other found it done.
            assertThat(done).extracting(List::size).containsExactlyInAnyOrder(1, 0);
            Outcome outcome = Outcome.DELIVERED;
            for (int cycle = 0; cycle < 100 && outcome != Outcome.NO_CHANGES; cycle++) {
                outcome = engine.runOnce().get("Busy").outcome();
            }
            assertThat(outcome).as("drained").isEqualTo(Outcome.NO_CHANGES);
            List<Change> changes = out.changes();
            assertThat(changes.stream().map(c -> c.fields().get("id").asInt()).collect(Collectors.toList()))
                    .containsExactlyInAnyOrderElementsOf(committed);
            assertThat(changes).anySatisfy(c -> assertThat(c.fields().has("name")).isTrue());
            assertThat(changes).anySatisfy(c -> assertThat(c.fields().has("Name")).isTrue());
            // Once one change arrives under the new key, every later one does.
            int firstNew = indexOfFirst(changes, "Name");
            assertThat(changes.subList(firstNew, changes.size())).allSatisfy(c ->
                    assertThat(c.fields().has("Name")).isTrue());
        }
    }

    /**
     * An outbox installed before installs were recorded is adopted only when its objects are exactly what the
     * configuration generates (a_record_overwritten_by_hand... shows adoption). One of that version notifies on
     * every write, which armed wake-ups replaced: with the same options it is refused, naming upgrade, and upgrade
     * migrates it keeping its changes.
     */
    @Test
    void an_outbox_installed_before_installs_were_recorded_with_the_same_options_is_refused_then_upgraded()
            throws IOException {
        database.execute("CREATE SCHEMA sales; CREATE TABLE sales.items (item_code text PRIMARY KEY,"
                + " description text, attrs json, price numeric)");
        runInOneTransaction(legacyScript("sales"));
        database.execute("INSERT INTO sales.items VALUES ('A-1', 'Widget', '{}', 1)");
        PostgresOutbox items = legacyConfiguration("sales").build();
        assertThat(comment("sales.items_outbox_state")).isEqualTo("What sales.items_outbox no longer holds (Tidemark).");
        String before = CatalogSnapshot.of(database, "sales");

        assertThat(items.differences(database.dataSource())).extracting(OutboxDifference::option).containsExactly(
                // The capture function twice: its body and its settings (it pinned search_path then).
                "table sales.items_outbox_wakeup", "function \"sales\".\"items_outbox_capture\"()",
                "function \"sales\".\"items_outbox_capture\"()", "function \"sales\".\"items_changes\"(json)",
                "function \"sales\".\"items_outbox_arm\"()");
        assertThatThrownBy(() -> items.install(database.dataSource()))
                .hasMessageContaining("carries no record of its options")
                .hasMessageContaining("PostgresOutbox.upgrade(dataSource)")
                .extracting(e -> ((TidemarkException) e).code()).isEqualTo(ErrorCode.SCHEMA_DRIFT);
        assertThat(CatalogSnapshot.of(database, "sales")).isEqualTo(before);

        items.upgrade(database.dataSource());

        assertThat(comment("sales.items_outbox_state")).startsWith("{\"tidemark\":\"outbox\",\"format\":1,");
        assertThat(items.differences(database.dataSource())).isEmpty();
        String upgraded = CatalogSnapshot.of(database, "sales");
        items.install(database.dataSource());
        assertThat(CatalogSnapshot.of(database, "sales")).isEqualTo(upgraded);
        assertThat(countChanges("sales")).isEqualTo(1);
    }

    @Test
    void an_outbox_installed_before_installs_were_recorded_that_differs_is_refused_then_upgraded() throws IOException {
        database.execute("CREATE SCHEMA shop; CREATE TABLE shop.items (item_code text PRIMARY KEY,"
                + " description text, attrs json, price numeric)");
        runInOneTransaction(legacyScript("shop"));
        database.execute("INSERT INTO shop.items VALUES ('A-1', 'Widget', '{}', 1)");
        PostgresOutbox other = legacyConfiguration("shop").payloadKey("description", "Text")
                .changeFunction("shop.items_feed").build();
        String before = CatalogSnapshot.of(database, "shop");

        assertThatThrownBy(() -> other.install(database.dataSource()))
                .hasMessageContaining("carries no record of its options (installed by an earlier Tidemark version")
                .hasMessageContaining("change function: installed shop.items_changes, requested shop.items_feed")
                .hasMessageContaining("function \"shop\".\"items_outbox_capture\"(): installed a body other than the"
                        + " generated one")
                .hasMessageContaining("function \"shop\".\"items_feed\"(json): installed missing")
                .extracting(e -> ((TidemarkException) e).code()).isEqualTo(ErrorCode.SCHEMA_DRIFT);
        assertThat(CatalogSnapshot.of(database, "shop")).isEqualTo(before);

        other.upgrade(database.dataSource());
        database.execute("UPDATE shop.items SET description = 'Gadget'");

        assertThat(objects("shop")).doesNotContain("items_changes").contains("items_feed");
        assertThat(other.differences(database.dataSource())).isEmpty();
        assertThat(OutboxTables.call(database.dataSource(), "shop.items_feed", "{\"fromVersion\":"
                + trimmedThrough("shop") + "}").get("Data").toString().replaceAll("\"\\$version\":[0-9]+,", ""))
                .isEqualTo("[{\"$operation\":\"I\",\"ItemCode\":\"A-1\",\"Description\":\"Widget\",\"Attributes\":{}},"
                        + "{\"$operation\":\"U\",\"$changed\":[\"Text\"],\"ItemCode\":\"A-1\",\"Text\":\"Gadget\","
                        + "\"Attributes\":{}}]");
    }

    @Test
    void a_record_of_the_same_options_with_another_sql_hash_is_a_difference_that_upgrade_resolves() {
        OutboxTables t = OutboxTables.create(database, "hashed", "id int PRIMARY KEY, name text");
        String state = "public." + t.table + "_outbox_state";
        String record = comment(state);
        String earlier = record.replaceFirst("\"scriptHash\":\"[0-9a-f]{64}\"", "\"scriptHash\":\"" + "0".repeat(64) + "\"");
        assertThat(earlier).isNotEqualTo(record);
        t.execute("COMMENT ON TABLE " + state + " IS '" + earlier + "'");

        assertThat(t.outbox.differences(database.dataSource())).singleElement().satisfies(d -> {
            assertThat(d.option()).isEqualTo("generated SQL");
            assertThat(d.installed()).isEqualTo("sha256 000000000000...");
            assertThat(d.requested()).endsWith("(this Tidemark version generates other SQL for the same options)");
        });
        assertThatThrownBy(() -> t.outbox.install(database.dataSource()))
                .hasMessageContaining("generated SQL: installed sha256 000000000000...")
                .extracting(e -> ((TidemarkException) e).code()).isEqualTo(ErrorCode.SCHEMA_DRIFT);

        assertThat(t.outbox.upgrade(database.dataSource())).extracting(OutboxDifference::option)
                .containsExactly("generated SQL");
        assertThat(comment(state)).isEqualTo(record);
        assertThat(t.outbox.differences(database.dataSource())).isEmpty();
    }

    @Test
    void a_record_overwritten_by_hand_is_written_again_when_the_objects_are_as_generated() {
        OutboxTables t = OutboxTables.create(database, "noted", "id int PRIMARY KEY, name text");
        t.execute("COMMENT ON TABLE public." + t.table + "_outbox_state IS 'our notes'");

        assertThat(t.outbox.differences(database.dataSource())).isEmpty();
        t.outbox.install(database.dataSource());

        assertThat(comment("public." + t.table + "_outbox_state")).startsWith("{\"tidemark\":\"outbox\"");
        PostgresOutbox renamed = PostgresOutbox.forTable("public." + t.table).payloadKey("name", "Name").build();
        assertThat(renamed.differences(database.dataSource())).extracting(OutboxDifference::option)
                .containsExactly("payload keys");
    }

    @Test
    void an_outbox_whose_capture_function_pins_its_search_path_is_a_difference_that_upgrade_migrates()
            throws IOException {
        database.execute("CREATE SCHEMA pinned; CREATE TABLE pinned.items (item_code text PRIMARY KEY,"
                + " description text, attrs json, price numeric)");
        runInOneTransaction(Files.readString(PREVIOUS_SCRIPT, StandardCharsets.UTF_8).replace("sales", "pinned"));
        database.execute("INSERT INTO pinned.items VALUES ('A-1', 'Widget', '{}', 1)");
        PostgresOutbox items = legacyConfiguration("pinned").build();
        // The record names the same options; the SQL hash is what tells the installed capture function apart (and
        // the wake-up flag that script did not create yet).
        assertThat(items.differences(database.dataSource())).anySatisfy(d -> {
            assertThat(d.option()).isEqualTo("generated SQL");
            assertThat(d.installed()).isEqualTo("sha256 1b902faa560a...");
        }).anySatisfy(d -> assertThat(d.option()).isEqualTo("table pinned.items_outbox_wakeup")).hasSize(2);
        assertThatThrownBy(() -> items.install(database.dataSource()))
                .hasMessageContaining("generated SQL: installed sha256 1b902faa560a...")
                .hasMessageContaining("upgrade")
                .extracting(e -> ((TidemarkException) e).code()).isEqualTo(ErrorCode.SCHEMA_DRIFT);

        items.upgrade(database.dataSource());
        database.execute("UPDATE pinned.items SET description = 'Gadget'");

        assertThat(items.differences(database.dataSource())).isEmpty();
        assertThat(text("SELECT pg_catalog.array_to_string(proconfig, ', ') FROM pg_catalog.pg_proc"
                + " WHERE oid = 'pinned.items_outbox_capture()'::regprocedure"))
                .isEqualTo("TimeZone=UTC, extra_float_digits=1, bytea_output=hex, IntervalStyle=iso_8601");
        assertThat(OutboxTables.call(database.dataSource(), "pinned.items_changes", "{\"fromVersion\":"
                + trimmedThrough("pinned") + "}").get("Data").toString().replaceAll("\"\\$version\":[0-9]+,", ""))
                .as("the change captured before the upgrade and the one after")
                .isEqualTo("[{\"$operation\":\"I\",\"ItemCode\":\"A-1\",\"Description\":\"Widget\",\"Attributes\":{}},"
                        + "{\"$operation\":\"U\",\"$changed\":[\"Description\"],\"ItemCode\":\"A-1\","
                        + "\"Description\":\"Gadget\",\"Attributes\":{}}]");
    }

    @ParameterizedTest
    @EnumSource(CaptureShape.class)
    void an_outbox_whose_change_function_is_in_sql_is_upgraded_to_plpgsql_and_keeps_delivering(CaptureShape capture)
            throws IOException {
        String schema = "sql_changes_" + capture.name().toLowerCase(Locale.ROOT);
        String table = schema + (capture == CaptureShape.KEYS ? ".items_k" : ".items");
        database.execute("CREATE SCHEMA " + schema + "; CREATE TABLE " + table + " (item_code text PRIMARY KEY,"
                + " description text, attrs json, price numeric)");
        Path previous = capture == CaptureShape.KEYS ? SQL_CHANGE_FUNCTION_KEYS_SCRIPT : SQL_CHANGE_FUNCTION_SCRIPT;
        runInOneTransaction(Files.readString(previous, StandardCharsets.UTF_8).replace("sales", schema));
        String changeFunction = table + "_changes(json)";
        assertThat(language(changeFunction)).isEqualTo("sql");
        PostgresOutbox items = PostgresOutbox.forTable(table)
                .key("item_code")
                .columns("description", "attrs")
                .payloadKey("item_code", "ItemCode")
                .payloadKey("description", "Description")
                .payloadKey("attrs", "Attributes")
                .capture(capture)
                .build();
        // The record names the same options: only the SQL hash tells the installed change function apart.
        assertThat(items.differences(database.dataSource())).extracting(OutboxDifference::option)
                .containsExactly("generated SQL");

        String object = "Items " + capture; // the database's one watermark store holds both runs' objects
        RecordingDestination out = new RecordingDestination();
        try (SyncEngine engine = OutboxTables.engine(database, schema, JdbcWatermarkStore.create(database.dataSource()),
                out).track(items.track(object)).build()) {
            database.execute("INSERT INTO " + table + " VALUES ('A-1', 'Widget', '{}', 1)");
            assertThat(engine.runOnce().get(object).outcome()).isEqualTo(Outcome.DELIVERED);
            database.execute("UPDATE " + table + " SET description = 'Gadget'"); // captured before the upgrade

            assertThat(items.upgrade(database.dataSource())).extracting(OutboxDifference::option)
                    .containsExactly("generated SQL");
            assertThat(language(changeFunction)).isEqualTo("plpgsql");
            assertThat(items.differences(database.dataSource())).isEmpty();
            assertThat(exists(table + "_outbox_request(json)")).as("the request function of earlier versions is"
                    + " dropped: the change function checks the request itself").isFalse();
            database.execute("INSERT INTO " + table + " VALUES ('A-2', 'Gizmo', NULL, 2)");

            assertThat(engine.runOnce().get(object).outcome()).isEqualTo(Outcome.DELIVERED);
            assertThat(engine.runOnce().get(object).outcome()).isEqualTo(Outcome.NO_CHANGES);
        }
        List<ChangeBatch> batches = out.batches();
        assertThat(batches).extracting(ChangeBatch::syncType).containsExactly(SyncType.FULL, SyncType.DIFF);
        assertThat(batches.get(0).changes()).extracting(c -> c.fields().toString())
                .containsExactly("{\"ItemCode\":\"A-1\",\"Description\":\"Widget\",\"Attributes\":{}}");
        assertThat(batches.get(1).changes()).extracting(c -> c.fields().toString()).containsExactly(
                "{\"ItemCode\":\"A-1\",\"Description\":\"Gadget\",\"Attributes\":{}}",
                "{\"ItemCode\":\"A-2\",\"Description\":\"Gizmo\",\"Attributes\":null}");
    }

    /** Whether a function of that signature ({@code schema.name(json)}) exists. */
    private boolean exists(String signature) {
        try (var c = database.dataSource().getConnection();
             var s = c.prepareStatement("SELECT to_regprocedure(?) IS NOT NULL")) {
            s.setString(1, signature);
            try (var rs = s.executeQuery()) {
                rs.next();
                return rs.getBoolean(1);
            }
        } catch (java.sql.SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The language a function is written in, by its signature ({@code schema.name(json)}). */
    private String language(String signature) {
        return text("SELECT l.lanname FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_language l ON l.oid = p.prolang"
                + " WHERE p.oid = '" + signature + "'::regprocedure");
    }

    /** The configuration the legacy golden script was generated from, in {@code schema}. */
    private static PostgresOutbox.Builder legacyConfiguration(String schema) {
        return PostgresOutbox.forTable(schema + ".items")
                .key("item_code")
                .columns("description", "attrs")
                .payloadKey("item_code", "ItemCode")
                .payloadKey("description", "Description")
                .payloadKey("attrs", "Attributes");
    }

    private static String legacyScript(String schema) throws IOException {
        String script = Files.readString(LEGACY_SCRIPT, StandardCharsets.UTF_8);
        assertThat(script).doesNotContain("\"tidemark\":\"outbox\"");
        return script.replace("sales", schema);
    }

    private void runInOneTransaction(String script) {
        try (Connection c = database.dataSource().getConnection(); Statement s = c.createStatement()) {
            c.setAutoCommit(false);
            s.execute(script);
            c.commit();
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    private String comment(String table) {
        return text("SELECT obj_description('" + table + "'::regclass, 'pg_class')");
    }

    /** The schema's functions and triggers with the transaction that last wrote each. */
    private String objects(String schema) {
        return text("SELECT string_agg(x, ', ' ORDER BY x) FROM (SELECT p.proname || ' ' || p.xmin::text AS x"
                + " FROM pg_proc p WHERE p.pronamespace = '" + schema + "'::regnamespace UNION ALL"
                + " SELECT t.tgname || ' ' || t.xmin::text FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid"
                + " WHERE c.relnamespace = '" + schema + "'::regnamespace AND NOT t.tgisinternal) s");
    }

    private long countChanges(String schema) {
        return Long.parseLong(text("SELECT count(*) FROM " + schema + ".items_outbox"));
    }

    private long trimmedThrough(String schema) {
        return Long.parseLong(text("SELECT trimmed_through FROM " + schema + ".items_outbox_state"));
    }

    private String text(String sql) {
        try (Connection c = database.dataSource().getConnection(); Statement s = c.createStatement();
             var rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getString(1);
        } catch (SQLException e) {
            throw new IllegalStateException(sql, e);
        }
    }

    /** Inserts rows, one transaction each, on its own connection, until told to stop; records what committed. */
    private void write(OutboxTables t, AtomicInteger ids, Set<Integer> committed, AtomicBoolean stop) {
        try (Connection c = database.dataSource().getConnection();
             PreparedStatement s = c.prepareStatement("INSERT INTO public." + t.table + " VALUES (?, 'w')")) {
            while (!stop.get()) {
                int id = ids.incrementAndGet();
                s.setInt(1, id);
                s.executeUpdate();
                committed.add(id);
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void awaitAtLeast(Set<Integer> committed, int count) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (committed.size() < count) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("writers committed only " + committed.size() + " rows");
            }
            Thread.sleep(10);
        }
    }

    private static void await(CyclicBarrier barrier) {
        try {
            barrier.await(30, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static int indexOfFirst(List<Change> changes, String field) {
        for (int i = 0; i < changes.size(); i++) {
            if (changes.get(i).fields().has(field)) {
                return i;
            }
        }
        throw new AssertionError("no change has " + field);
    }
}
