package io.tidemark.cli;

import io.tidemark.history.TemporalTable;
import io.tidemark.postgres.PostgresLogicalCapture;
import io.tidemark.postgres.PostgresOutbox;
import io.tidemark.sqlserver.ChangeProcedureGenerator;
import io.tidemark.sqlserver.ChangeTrackingSetup;
import io.tidemark.sqlserver.LeastPrivilegeRole;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.nio.charset.StandardCharsets;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/** Every script the tool prints is, byte for byte, the one the Java API generates for the same options. */
@EmbeddedPostgresTest
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ScriptsMatchTheApiIT {

    private final TestDatabase database;

    ScriptsMatchTheApiIT(TestDatabase database) {
        this.database = database;
    }

    @BeforeAll
    void tables() {
        database.execute("CREATE TABLE public.items (item_code text PRIMARY KEY, description text, price numeric,"
                + " search tsvector); CREATE SCHEMA sales; CREATE TABLE sales.\"Order\" (id bigint PRIMARY KEY, total"
                + " numeric, created date)");
    }

    private static void same(Cli.Run run, String api) {
        assertThat(run.exit()).as(run.toString()).isZero();
        assertThat(run.stdoutBytes()).as("tidemark's stdout is the API's script, byte for byte")
                .isEqualTo(api.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void outbox_script_without_a_database() {
        String api = PostgresOutbox.forTable("public.items").key("item_code").columns("description", "price")
                .payloadKey("item_code", "ItemCode").notifyChannel("items_wakeup").build().script();

        same(Cli.run("outbox", "script", "public.items", "--key", "item_code", "--columns", "description,price",
                "--payload-key", "item_code=ItemCode", "--notify-channel", "items_wakeup"), api);
    }

    @Test
    void outbox_script_of_keys_without_a_database() {
        String api = PostgresOutbox.forTable("public.items").key("item_code").columns("description", "price")
                .capture(io.tidemark.postgres.CaptureShape.KEYS)
                .truncate(io.tidemark.postgres.TruncatePolicy.RECORD_DELETES).build().script();

        same(Cli.run("outbox", "script", "public.items", "--key", "item_code", "--columns", "description,price",
                "--capture", "keys", "--truncate", "record_deletes"), api);
    }

    @Test
    void outbox_script_read_from_the_database() {
        String api = PostgresOutbox.forTable("items").outboxTable("items_changes_log").notifications(false)
                .truncate(io.tidemark.postgres.TruncatePolicy.REFUSE).build().script(database.dataSource());

        same(Cli.run("outbox", "script", "items", "--outbox-table", "items_changes_log", "--no-notifications",
                "--truncate", "refuse", "--url", database.jdbcUrl()), api);
    }

    @Test
    void logical_script() {
        String api = PostgresLogicalCapture.forTables("public.items", "sales.\"Order\"").slot("shop_sync")
                .publication("shop_tables").oldRows(true).build().script();

        same(Cli.run("logical", "script", "public.items", "sales.\"Order\"", "--slot", "shop_sync", "--publication",
                "shop_tables", "--old-rows"), api);
        assertThat(api).contains("REPLICA IDENTITY FULL", "pg_create_logical_replication_slot('shop_sync'");
    }

    @Test
    void logical_script_with_the_defaults() {
        same(Cli.run("logical", "script", "items"), PostgresLogicalCapture.forTables("items").build().script());
    }

    @Test
    void history_script() {
        String api = TemporalTable.forTable("sales.\"Order\"").exclude("total").sessionUserColumn(true)
                .seedValidFrom("created").periodIndex(true).build().script(database.dataSource());

        same(Cli.run("history", "script", "sales.\"Order\"", "--exclude", "total", "--session-user-column",
                "--seed-valid-from", "created", "--period-index", "--url", database.jdbcUrl()), api);
        assertThat(api).contains("CREATE TABLE \"sales\".\"Order_history\"");
    }

    @Test
    void history_script_with_statement_triggers_and_a_named_history_table() {
        String api = TemporalTable.forTable("items").historyTable("items_versions").exclude("search")
                .triggerMode(io.tidemark.history.TriggerMode.STATEMENT).settingsPrefix("app")
                .build().script(database.dataSource());

        same(Cli.run("history", "script", "items", "--history-table", "items_versions", "--exclude", "search",
                "--trigger-mode", "statement", "--settings-prefix", "app", "--url", database.jdbcUrl()), api);
    }

    @Test
    void sqlserver_setup() {
        String api = ChangeTrackingSetup.builder().retention(Duration.ofDays(3)).table("dbo.Items")
                .table("sales.Orders").build().script();

        same(Cli.run("sqlserver", "setup", "dbo.Items", "sales.Orders", "--retention", "3d"), api);
    }

    @Test
    void sqlserver_procedure() {
        String api = ChangeProcedureGenerator.forTable("dbo.Items").keyColumns("ItemCode")
                .columns("Description", "Price").procedure("dbo.GetItemChanges")
                .level(ChangeProcedureGenerator.Level.COLUMN).build().script();

        same(Cli.run("sqlserver", "procedure", "dbo.Items", "--key", "ItemCode", "--columns", "Description,Price",
                "--procedure", "dbo.GetItemChanges", "--level", "COLUMN"), api);
    }

    @Test
    void sqlserver_role() {
        String api = LeastPrivilegeRole.named("tidemark_reader").procedure("dbo.Items_changes").table("dbo.Items")
                .storeSchema("tidemark").member("app_user").build().script();

        same(Cli.run("sqlserver", "role", "tidemark_reader", "--procedure", "dbo.Items_changes", "--table",
                "dbo.Items", "--store-schema", "tidemark", "--member", "app_user"), api);
    }
}
